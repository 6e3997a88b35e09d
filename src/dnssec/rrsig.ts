// RRSIG records (RFC 4034 3): the signature of one RRset by one key, over the RRSIG's own rdata
// (without the signature) followed by the RRset in canonical form.

import type { RR } from "../dns/message.ts";
import { canonicalName, signedLabels, Writer } from "./canonical.ts";
import type { SigningKey } from "./keys.ts";

export const RRSIG = 46;
export const NSEC = 47;
export const DNSKEY = 48;

/** When a signature starts and ends, in seconds since the epoch (serial arithmetic, RFC 4034 3.1.5). */
export interface Validity {
  inception: number;
  expiration: number;
}

export interface SignTerms {
  rrs: readonly RR[];
  /** The original TTL. */
  ttl: number;
  /** canonicalRRset(rrs, ttl), when the caller has it already. */
  covered: Uint8Array;
  key: SigningKey;
  signer: string;
  validity: Validity;
}

/** The RRSIG of `rrs` (one owner, type and class) by `key` for zone `signer`, over the RRset's
 * canonical octets; its TTL is the original TTL. */
export function signCanonical(t: SignTerms): RR {
  const head = new Writer();
  head.u16(t.rrs[0].type);
  head.u8(t.key.algorithm);
  head.u8(signedLabels(t.rrs[0].name));
  head.u32(t.ttl);
  head.u32(t.validity.expiration);
  head.u32(t.validity.inception);
  head.u16(t.key.tag);
  head.bytes(canonicalName(t.signer));
  const rdata = head.done();
  const signature = t.key.sign(Buffer.concat([rdata, t.covered]));
  const { name, class: klass } = t.rrs[0];
  return {
    name,
    type: RRSIG,
    class: klass,
    ttl: t.ttl,
    data: { type: RRSIG, raw: Buffer.concat([rdata, signature]) },
  };
}

/** The DNSKEY record of `key` at `zone`. */
export function dnskeyRecord(key: SigningKey, zone: string, ttl: number): RR {
  return { name: zone, type: DNSKEY, class: 1, ttl, data: { type: DNSKEY, raw: key.rdata } };
}

/** The type an RRSIG covers: the first two octets of its rdata. */
export function coveredType(rr: RR): number {
  const raw = (rr.data as { raw: Uint8Array }).raw;
  return (raw[0] << 8) | raw[1];
}
