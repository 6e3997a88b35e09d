// DNSSEC records in a zone file's presentation form (RFC 4034 2.2, 3.2 and 4.2), read into their wire
// rdata: what a signed zone file holds, as dnssec-signzone, ldns-signzone or the sign plugin write it.

import type { RData } from "../dns/message.ts";
import { typeFromName, typeName } from "../dns/constants.ts";
import { nameFromText } from "../dns/text.ts";
import { canonicalName, typeBitmap, Writer } from "./canonical.ts";
import { DNSKEY, NSEC, RRSIG } from "./rrsig.ts";

/** The DNSSEC types read here. */
export const DNSSEC_TYPES: ReadonlySet<number> = new Set([RRSIG, NSEC, DNSKEY]);

/** The rdata of an RRSIG, NSEC or DNSKEY record from its fields. Throws with what is wrong. */
export function dnssecRdataFromText(type: number, fields: readonly string[], origin: string): RData {
  const w = new Writer();
  if (type === NSEC) {
    if (fields.length < 1) throw new Error("NSEC needs a next name");
    w.bytes(canonicalName(nameFromText(fields[0], origin)));
    w.bytes(typeBitmap(fields.slice(1).map((f) => mnemonic(f))));
  } else if (type === DNSKEY) {
    if (fields.length < 4) throw new Error("DNSKEY takes flags, protocol, algorithm and a key");
    w.u16(number(fields[0], "flags", 0xffff));
    w.u8(number(fields[1], "protocol", 0xff));
    w.u8(number(fields[2], "algorithm", 0xff));
    w.bytes(base64(fields.slice(3)));
  } else if (type === RRSIG) {
    if (fields.length < 9) throw new Error("RRSIG takes 8 fields and a signature");
    w.u16(mnemonic(fields[0]));
    w.u8(number(fields[1], "algorithm", 0xff));
    w.u8(number(fields[2], "labels", 0xff));
    w.u32(number(fields[3], "original TTL", 0xffffffff));
    w.u32(sigTime(fields[4]));
    w.u32(sigTime(fields[5]));
    w.u16(number(fields[6], "key tag", 0xffff));
    w.bytes(canonicalName(nameFromText(fields[7], origin)));
    w.bytes(base64(fields.slice(8)));
  } else {
    throw new Error(`${typeName(type)} is not read here`);
  }
  return { type, raw: new Uint8Array(w.done()) };
}

function mnemonic(f: string): number {
  const t = typeFromName(f);
  if (t === undefined) throw new Error(`unknown type '${f}'`);
  return t;
}

function number(f: string, what: string, max: number): number {
  if (!/^\d+$/.test(f) || Number(f) > max) throw new Error(`invalid ${what} '${f}'`);
  return Number(f);
}

/** RFC 4034 3.2: YYYYMMDDHHmmSS in UTC, or seconds since the epoch. */
function sigTime(f: string): number {
  const m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/.exec(f);
  if (m) return (Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) / 1000) >>> 0;
  return number(f, "signature time", 0xffffffff);
}

function base64(fields: readonly string[]): Buffer {
  const text = fields.join("");
  if (text.length === 0 || !/^[A-Za-z0-9+/]+=*$/.test(text)) throw new Error("invalid base64 data");
  return Buffer.from(text, "base64");
}
