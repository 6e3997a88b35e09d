// Server block keys: `[dns://]ZONE[:PORT]`, where ZONE is a domain name or a CIDR prefix standing for
// its reverse zones, as in CoreDNS. A prefix that does not end on an octet (IPv4) or nibble (IPv6)
// boundary becomes every zone of the next boundary that it covers: 10.0.0.0/23 is 0.0.10.in-addr.arpa.
// and 1.0.10.in-addr.arpa.

import { ConfigError } from "./errors.ts";
import type { ServerBlock, ServerKey, Token } from "./types.ts";
import { canonical, expandIPv6 } from "../dns/name.ts";

const UNSUPPORTED = new Set(["tls", "https", "grpc", "quic", "h3", "https3"]);

export function parseKey(t: Token): ServerKey[] {
  const bad = (why: string) =>
    new ConfigError(t.file, t.line, `invalid server block key '${t.text}': ${why}`);
  let s = t.text.toLowerCase();

  const scheme = /^([a-z0-9+.-]*):\/\//.exec(s);
  if (scheme) {
    if (UNSUPPORTED.has(scheme[1])) throw bad(`${scheme[1]}:// is not supported yet (only dns://)`);
    if (scheme[1] !== "dns") throw bad(`unknown scheme '${scheme[1]}://'`);
    s = s.slice(scheme[0].length);
  }

  // The port is what follows the last colon, when it is a number; a CIDR puts its /mask before it.
  let port: number | undefined;
  const p = /:(\d*)$/.exec(s);
  if (p) {
    if (p[1] === "") throw bad("missing port after ':'");
    port = Number(p[1]);
    if (port < 1 || port > 65535) throw bad(`port ${p[1]} is out of range [1, 65535]`);
    s = s.slice(0, p.index);
  }

  let zones: string[];
  if (s.includes("/")) {
    const z = reverseZones(s);
    if (!z) throw bad(`'${s}' is not a CIDR prefix`);
    zones = z;
  } else {
    zones = [canonical(s)];
    if (!validZone(zones[0])) throw bad(`'${s}' is not a valid zone name`);
  }
  return zones.map((zone) => ({ scheme: "dns", zone, port, text: t.text }));
}

/** Every key of a block, parsed (a CIDR key may give several). */
export function blockKeys(b: ServerBlock): ServerKey[] {
  return b.keys.flatMap(parseKey);
}

function validZone(zone: string): boolean {
  if (zone === ".") return true;
  if (zone.length > 254) return false;
  return zone
    .slice(0, -1)
    .split(".")
    .every((l) => l.length > 0 && l.length <= 63 && /^[a-z0-9_-]+$/.test(l));
}

/** The reverse zones of a CIDR prefix, or undefined when it is not one. */
export function reverseZones(cidr: string): string[] | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  if (!m) return undefined;
  const prefix = Number(m[2]);
  if (m[1].includes(":")) {
    const nibbles = expandIPv6(m[1]);
    if (!nibbles || prefix > 128) return undefined;
    return split(
      [...nibbles].map((n) => parseInt(n, 16)),
      4,
      prefix,
      16,
      "ip6.arpa.",
    );
  }
  const octets = m[1].split(".");
  if (octets.length !== 4 || octets.some((o) => !/^\d{1,3}$/.test(o) || Number(o) > 255)) return undefined;
  if (prefix > 32) return undefined;
  return split(octets.map(Number), 8, prefix, 10, "in-addr.arpa.");
}

/** Reverse zones for the first `prefix` bits of an address written as digits of `width` bits. */
function split(digits: number[], width: number, prefix: number, radix: number, suffix: string): string[] {
  const n = Math.ceil(prefix / width);
  if (n === 0) return [suffix];
  const free = n * width - prefix; // bits of the last digit left open by the prefix
  const head = digits.slice(0, n - 1);
  const base = digits[n - 1] & ~((1 << free) - 1);
  const zones: string[] = [];
  for (let j = 0; j < 1 << free; j++) {
    const labels = [...head, base + j].reverse().map((d) => d.toString(radix));
    zones.push(`${labels.join(".")}.${suffix}`);
  }
  return zones;
}
