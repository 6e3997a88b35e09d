// The client network a response-rate account belongs to: the source address cut to a prefix length
// (BIND's ipv4-prefix-length and ipv6-prefix-length), as a short string key. Parsed by hand: this
// runs for every UDP reply of a block with `rrl`, and node:net has no parser that returns the bits.

import { ipv4Bits } from "../../dns/ipv4.ts";

/** "4" + the masked IPv4 address in base 36, or "6" + the masked IPv6 hextets; undefined for text
 * that is no address (nothing clusterdns's sockets hand out). An IPv4-mapped IPv6 address counts as
 * its IPv4 address. */
export function prefixKey(address: string, v4Bits: number, v6Bits: number): string | undefined {
  if (!address.includes(":")) return v4Key(address, v4Bits);
  if (address.startsWith("::ffff:") && address.includes(".")) return v4Key(address.slice(7), v4Bits);
  const groups = hextets(address);
  if (groups === undefined) return undefined;
  let key = "6";
  for (let i = 0, left = v6Bits; left > 0; i++, left -= 16) {
    const g = left >= 16 ? groups[i] : groups[i] & (0xffff << (16 - left)) & 0xffff;
    key += g.toString(16) + ":";
  }
  return key;
}

function v4Key(address: string, bits: number): string | undefined {
  const n = ipv4Bits(address);
  if (n < 0) return undefined;
  const masked = bits === 0 ? 0 : bits >= 32 ? n : Math.floor(n / 2 ** (32 - bits)) * 2 ** (32 - bits);
  return "4" + masked.toString(36);
}

/** The eight 16-bit groups of an IPv6 address ("::" expanded, a zone index dropped). */
function hextets(address: string): number[] | undefined {
  const text = address.split("%")[0];
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const part = (s: string) => (s === "" ? [] : s.split(":").map((h) => Number.parseInt(h, 16)));
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
