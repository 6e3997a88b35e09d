// An address as text ("10.0.0.1", "fd00::1", "::ffff:10.0.0.1") to its octets, for dnstap's address
// fields. IPv4 is read digit by digit (most clients); IPv6 is parsed once per distinct text and kept in
// a small table, since a server hears the same clients again and again. An IPv4-mapped address is
// written as IPv4, as CoreDNS does (Go's To4).

import { isIPv6 } from "node:net";

const V6_CACHE = 256;
const v6 = new Map<string, Uint8Array>();

/** Writes the address's octets into out[0..) and returns 4 or 16; 0 when `text` is no address. */
export function ipOctets(text: string, out: Uint8Array): number {
  const n = ipv4(text, 0, out);
  if (n === 4) return 4;
  let b = v6.get(text);
  if (b === undefined) {
    const parsed = ipv6(text);
    if (parsed === undefined) return 0;
    if (v6.size >= V6_CACHE) v6.clear();
    v6.set(text, parsed);
    b = parsed;
  }
  if (isMapped(b)) {
    out.set(b.subarray(12), 0);
    return 4;
  }
  out.set(b, 0);
  return 16;
}

/** Dotted IPv4 at text[from..] to out[0..4): 4, or 0 when it is not one. */
function ipv4(text: string, from: number, out: Uint8Array): number {
  let part = 0;
  let digits = 0;
  let v = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || part === 3) return 0;
      out[part++] = v;
      v = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39 && digits < 3) {
      v = v * 10 + c - 0x30;
      if (v > 255) return 0;
      digits++;
    } else return 0;
  }
  if (digits === 0 || part !== 3) return 0;
  out[3] = v;
  return 4;
}

function ipv6(text: string): Uint8Array | undefined {
  const zone = text.indexOf("%");
  const t = zone < 0 ? text : text.slice(0, zone);
  if (!isIPv6(t)) return undefined;
  const out = new Uint8Array(16);
  const [head, tail] = t.includes("::") ? t.split("::") : [t, undefined];
  const groups = (s: string): number[] => {
    if (s === "") return [];
    const words: number[] = [];
    for (const g of s.split(":")) {
      if (g.includes(".")) {
        const v4 = new Uint8Array(4);
        ipv4(g, 0, v4);
        words.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else words.push(parseInt(g, 16));
    }
    return words;
  };
  const a = groups(head);
  const b = tail === undefined ? [] : groups(tail);
  const words = [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
  for (let i = 0; i < 8; i++) {
    out[2 * i] = words[i] >> 8;
    out[2 * i + 1] = words[i] & 0xff;
  }
  return out;
}

function isMapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}
