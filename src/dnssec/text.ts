// DNSSEC records in a zone file's presentation form (RFC 4034 2.2, 3.2, 4.2 and 5.3), read into their wire
// rdata: what a signed zone file holds, as dnssec-signzone, ldns-signzone or the sign plugin write it.

import type { RData } from "../dns/message.ts";
import { typeFromName, typeName } from "../dns/constants.ts";
import { nameFromText } from "../dns/text.ts";
import { labelText } from "../dns/name.ts";
import { canonicalName, typeBitmap, Writer } from "./canonical.ts";
import { DNSKEY, NSEC, RRSIG } from "./rrsig.ts";

/** A secure delegation's DS (RFC 4034 5), which the parent zone holds and signs. */
const DS = 43;

/** The DNSSEC types read here. */
export const DNSSEC_TYPES: ReadonlySet<number> = new Set([RRSIG, NSEC, DNSKEY, DS]);

/** The rdata of an RRSIG, NSEC, DNSKEY or DS record from its fields. Throws with what is wrong. */
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
  } else if (type === DS) {
    if (fields.length < 4) throw new Error("DS takes a key tag, algorithm, digest type and a digest");
    w.u16(number(fields[0], "key tag", 0xffff));
    w.u8(number(fields[1], "algorithm", 0xff));
    w.u8(number(fields[2], "digest type", 0xff));
    const digest = fields.slice(3).join("");
    if (!/^([0-9a-fA-F]{2})+$/.test(digest)) throw new Error("invalid hex digest");
    w.bytes(Buffer.from(digest, "hex"));
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

/** The presentation form of an RRSIG's, NSEC's, DNSKEY's or DS's wire rdata (the inverse of
 * dnssecRdataFromText), for signed zone files people read. */
export function dnssecRdataToText(type: number, raw: Uint8Array): string {
  const b = Buffer.from(raw);
  if (type === DNSKEY) return `${b.readUInt16BE(0)} ${b[2]} ${b[3]} ${b.subarray(4).toString("base64")}`;
  if (type === DS)
    return `${b.readUInt16BE(0)} ${b[2]} ${b[3]} ${b.subarray(4).toString("hex").toUpperCase()}`;
  if (type === NSEC) {
    const [next, at] = wireName(b, 0);
    return [next, ...bitmapTypes(b.subarray(at)).map(typeName)].join(" ");
  }
  const [signer, at] = wireName(b, 18);
  return [
    typeName(b.readUInt16BE(0)),
    b[2],
    b[3],
    b.readUInt32BE(4),
    sigTimeText(b.readUInt32BE(8)),
    sigTimeText(b.readUInt32BE(12)),
    b.readUInt16BE(16),
    signer,
    b.subarray(at).toString("base64"),
  ].join(" ");
}

/** An uncompressed wire name at `at` as text, and where it ends. */
function wireName(b: Buffer, at: number): [string, number] {
  const out: string[] = [];
  while (b[at] !== 0) {
    out.push(labelText(b.toString("latin1", at + 1, at + 1 + b[at])));
    at += 1 + b[at];
  }
  return [out.length === 0 ? "." : out.join(".") + ".", at + 1];
}

function bitmapTypes(b: Buffer): number[] {
  const types: number[] = [];
  for (let i = 0; i + 1 < b.length; i += 2 + b[i + 1]) {
    for (let j = 0; j < b[i + 1]; j++)
      for (let bit = 0; bit < 8; bit++)
        if (b[i + 2 + j] & (0x80 >> bit)) types.push(b[i] * 256 + j * 8 + bit);
  }
  return types;
}

/** YYYYMMDDHHmmSS in UTC (RFC 4034 3.2). */
function sigTimeText(t: number): string {
  return new Date(t * 1000).toISOString().replace(/[-:T]/g, "").slice(0, 14);
}
