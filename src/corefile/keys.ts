// Server block keys: `[dns://|tls://|https://|grpc://]ZONE[:PORT]`, where ZONE is a domain name or a CIDR prefix standing for
// its reverse zones, as in CoreDNS. A prefix that does not end on an octet (IPv4) or nibble (IPv6)
// boundary becomes every zone of the next boundary that it covers: 10.0.0.0/23 is 0.0.10.in-addr.arpa.
// and 1.0.10.in-addr.arpa.

import { ConfigError } from "./errors.ts";
import type { ServerBlock, ServerKey, Token, Transport } from "./types.ts";
import { canonical, expandIPv6 } from "../dns/name.ts";

/** CoreDNS's transports clusterdns does not serve, and why (src/plugins/tls/README.md has the evidence). */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  quic: "DNS over QUIC is not served: Node 24 is built without node:quic",
  https3: "DNS over HTTP/3 is not served: Node 24 is built without QUIC",
  h3: "DNS over HTTP/3 is not served: Node 24 is built without QUIC",
};

/** The port a key of each transport gets when it names none (CoreDNS's): DNS's is the server's
 * default (53 or -dns.port), so it stays undefined here. */
const DEFAULT_PORTS: Readonly<Record<Transport, number | undefined>> = {
  dns: undefined,
  tls: 853,
  https: 443,
  grpc: 443,
};

export function parseKey(t: Token): ServerKey[] {
  const bad = (why: string) =>
    new ConfigError(t.file, t.line, `invalid server block key '${t.text}': ${why}`);
  let s = t.text.toLowerCase();

  let transport: Transport = "dns";
  const scheme = /^([a-z0-9+.-]*):\/\//.exec(s);
  if (scheme) {
    const why = UNSUPPORTED[scheme[1]];
    if (why !== undefined) throw bad(`${why} (dns://, tls://, https:// and grpc:// are)`);
    if (scheme[1] !== "dns" && scheme[1] !== "tls" && scheme[1] !== "https" && scheme[1] !== "grpc")
      throw bad(`unknown scheme '${scheme[1]}://'`);
    transport = scheme[1];
    s = s.slice(scheme[0].length);
  }

  // The port is what follows the last colon, when it is a number; a CIDR puts its /mask before it.
  let port = DEFAULT_PORTS[transport];
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
  return zones.map((zone) => ({ scheme: transport, zone, port, text: t.text }));
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
