// The IPv4-embedded IPv6 addresses of RFC 6052 section 2.2: an IPv4 address placed after a prefix of
// 32, 40, 48, 56, 64 or 96 bits, skipping bits 64-71 (the "u" octet, kept zero for compatibility with
// the interface-identifier format of RFC 4291), with the suffix after it zero.

import { isIPv4 } from "node:net";
import { compressIPv6, expandIPv6 } from "../../dns/name.ts";

/** The Well-Known Prefix (RFC 6052 2.1), CoreDNS's default. */
export const WELL_KNOWN_PREFIX = "64:ff9b::/96";

/** The prefix lengths RFC 6052 2.2 defines. */
const LENGTHS = [32, 40, 48, 56, 64, 96];

/** The octet that holds bits 64-71. */
const U_OCTET = 8;

export interface Pref64 {
  /** The prefix's 16 octets, zero past `length`. */
  readonly octets: Uint8Array;
  /** In bits. */
  readonly length: number;
  /** As written in the docs and logs: "64:ff9b::/96". */
  readonly text: string;
}

/** Parses "ADDRESS/LENGTH"; returns the reason as a string when it is no usable prefix. Bits past the
 * length are dropped, as a CIDR means (CoreDNS does the same). */
export function parsePrefix(text: string): Pref64 | string {
  const slash = text.indexOf("/");
  if (slash < 0) return `'${text}' is not an IPv6 prefix (want e.g. ${WELL_KNOWN_PREFIX})`;
  const nibbles = expandIPv6(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (nibbles === undefined || isIPv4(text.slice(0, slash))) {
    return `'${text}' is not an IPv6 prefix (want e.g. ${WELL_KNOWN_PREFIX})`;
  }
  const length = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  if (!LENGTHS.includes(length)) {
    return `'${text}': the prefix length must be one of ${LENGTHS.join(", ")} (RFC 6052 2.2)`;
  }
  const octets = new Uint8Array(16);
  for (let i = 0; i < length / 8; i++) octets[i] = parseInt(nibbles.slice(i * 2, i * 2 + 2), 16);
  if (length > 64 && octets[U_OCTET] !== 0) {
    return `'${text}': bits 64-71 of the prefix must be zero (RFC 6052 2.2)`;
  }
  return { octets, length, text: `${textOf(octets)}/${length}` };
}

/** The IPv6 address that embeds `v4` ("192.0.2.33") under the prefix, in RFC 5952 text form. */
export function embed(p: Pref64, v4: string): string {
  const out = new Uint8Array(p.octets);
  let at = p.length / 8;
  for (const part of v4.split(".")) {
    if (at === U_OCTET) at++;
    out[at++] = Number(part);
  }
  return textOf(out);
}

/** True for an IPv4-mapped address (::ffff:0:0/96), which RFC 6147 5.1.4 says not to count as an
 * AAAA answer: a name holding only such records is treated as having none. */
export function isMapped(v6: string): boolean {
  return expandIPv6(v6)?.startsWith("00000000000000000000ffff") ?? false;
}

function textOf(octets: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((octets[i] << 8) | octets[i + 1]).toString(16));
  return compressIPv6(groups.join(":"));
}
