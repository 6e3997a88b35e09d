// TSIG (RFC 8945) on the wire: reading a message's TSIG record, checking its MAC, and signing a
// message (a reply, a query, each message of a transfer). Every MAC is an HMAC over octets exactly as
// they travel: the message without its TSIG record (ARCOUNT one less, the original ID in place), then
// the TSIG variables (4.3.3); a reply's MAC starts with the request's MAC (4.3.1), and a transfer's
// later messages with the previous message's MAC and the timers only (4.3.1, 5.3.1).

import { createHmac, timingSafeEqual } from "node:crypto";
import { skipName } from "./walk.ts";
import { nameToWire } from "./name.ts";
import { Class, Type } from "./constants.ts";

/** TSIG error codes (RFC 8945 3). */
export const TsigError = { NOERROR: 0, BADSIG: 16, BADKEY: 17, BADTIME: 18, BADTRUNC: 22 } as const;

/** The algorithms, by their canonical names (RFC 8945 6), and node's names for their hashes. */
export const TSIG_ALGORITHMS: ReadonlyMap<string, string> = new Map([
  ["hmac-md5.sig-alg.reg.int.", "md5"],
  ["hmac-sha1.", "sha1"],
  ["hmac-sha224.", "sha224"],
  ["hmac-sha256.", "sha256"],
  ["hmac-sha384.", "sha384"],
  ["hmac-sha512.", "sha512"],
]);

/** The fudge clusterdns signs with (RFC 8945 10: 300 s recommended). */
export const FUDGE = 300;

export interface TsigKey {
  /** Canonical (lowercase, absolute). */
  name: string;
  /** Canonical, one of TSIG_ALGORITHMS. */
  algorithm: string;
  secret: Buffer;
}

/** A message's TSIG record, read off the wire. */
export interface TsigRecord {
  /** The key's name and algorithm, canonical. */
  keyName: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
}

/** Reads the TSIG record that starts at `at` (its owner name), the message's last record. */
export function readTsig(msg: Buffer, at: number): TsigRecord {
  const keyName = nameText(msg, at);
  const rdata = skipName(msg, at, msg.length) + 10;
  const algorithm = nameText(msg, rdata);
  let p = skipName(msg, rdata, msg.length);
  const timeSigned = msg.readUIntBE(p, 6);
  const fudge = msg.readUInt16BE(p + 6);
  const macSize = msg.readUInt16BE(p + 8);
  p += 10;
  const mac = Buffer.from(msg.subarray(p, p + macSize));
  p += macSize;
  const otherLen = msg.readUInt16BE(p + 4);
  return {
    keyName,
    algorithm,
    timeSigned,
    fudge,
    mac,
    originalId: msg.readUInt16BE(p),
    error: msg.readUInt16BE(p + 2),
    other: Buffer.from(msg.subarray(p + 6, p + 6 + otherLen)),
  };
}

/** The message without its TSIG record at `at`: ARCOUNT one less, the ID as given. */
export function withoutTsig(msg: Buffer, at: number, id: number): Buffer {
  const out = Buffer.from(msg.subarray(0, at));
  out.writeUInt16BE(id, 0);
  out.writeUInt16BE(out.readUInt16BE(10) - 1, 10);
  return out;
}

/** How a MAC is made: over the whole TSIG variables (a request, a reply, the first message of a
 * transfer) or over the timers only (a transfer's later messages). */
export interface MacInput {
  key: TsigKey;
  /** The message without TSIG, its original ID in place. */
  message: Buffer;
  /** The request's MAC for a reply, the previous message's for a transfer's later one; none for a
   * request. */
  prior?: Buffer;
  timeSigned: number;
  fudge: number;
  error: number;
  other: Buffer;
  timersOnly?: boolean;
}

export function computeMac(i: MacInput): Buffer {
  const h = createHmac(TSIG_ALGORITHMS.get(i.key.algorithm)!, i.key.secret);
  if (i.prior !== undefined) {
    h.update(u16(i.prior.length));
    h.update(i.prior);
  }
  h.update(i.message);
  const timers = Buffer.alloc(8);
  timers.writeUIntBE(i.timeSigned, 0, 6);
  timers.writeUInt16BE(i.fudge, 6);
  if (i.timersOnly) {
    h.update(timers);
    return h.digest();
  }
  // Key name, class ANY, TTL 0, algorithm, timers, error, other (RFC 8945 4.3.3), names uncompressed.
  h.update(wire(i.key.name));
  h.update(Buffer.from([0, Class.ANY, 0, 0, 0, 0]));
  h.update(wire(i.key.algorithm));
  h.update(timers);
  h.update(u16(i.error));
  h.update(u16(i.other.length));
  h.update(i.other);
  return h.digest();
}

/** True when `mac` is the MAC of `i` (in constant time). A MAC of another length never is. */
export function macMatches(mac: Buffer, i: MacInput): boolean {
  const want = computeMac(i);
  return mac.length === want.length && timingSafeEqual(mac, want);
}

/** `message` with a TSIG record appended (ARCOUNT one more). `mac` empty for an unsigned error. */
export function appendTsig(
  message: Buffer,
  t: Omit<TsigRecord, "keyName" | "algorithm"> & { key: Pick<TsigKey, "name" | "algorithm"> },
): Buffer {
  const alg = wire(t.key.algorithm);
  const rdata = Buffer.alloc(alg.length + 16 + t.mac.length + t.other.length);
  alg.copy(rdata, 0);
  let p = alg.length;
  rdata.writeUIntBE(t.timeSigned, p, 6);
  rdata.writeUInt16BE(t.fudge, p + 6);
  rdata.writeUInt16BE(t.mac.length, p + 8);
  t.mac.copy(rdata, p + 10);
  p += 10 + t.mac.length;
  rdata.writeUInt16BE(t.originalId, p);
  rdata.writeUInt16BE(t.error, p + 2);
  rdata.writeUInt16BE(t.other.length, p + 4);
  t.other.copy(rdata, p + 6);
  const head = Buffer.from([0, Type.TSIG, 0, Class.ANY, 0, 0, 0, 0, rdata.length >> 8, rdata.length & 0xff]);
  const out = Buffer.concat([message, wire(t.key.name), head, rdata]);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}

/** Octets a TSIG record under `key` adds to a message, with `other` octets of other data (by default
 * the most it carries: BADTIME's 6). */
export function tsigSize(key: TsigKey, other = 6): number {
  const hash = TSIG_ALGORITHMS.get(key.algorithm)!;
  const macLength = createHmac(hash, "").digest().length;
  return wire(key.name).length + 10 + wire(key.algorithm).length + 16 + macLength + other;
}

/** Now, in the seconds TSIG counts. */
export function tsigNow(): number {
  return Math.floor(Date.now() / 1000);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function wire(name: string): Buffer {
  const w = nameToWire(name);
  if (typeof w === "string") throw new Error(`TSIG name ${name}: ${w}`);
  return Buffer.from(w);
}

/** The name at `off` as canonical text (lowercase), pointers followed. */
function nameText(buf: Buffer, off: number): string {
  let out = "";
  let p = off;
  for (let l = buf[p]; l !== 0; l = buf[p]) {
    if (l >= 0xc0) {
      p = ((l & 0x3f) << 8) | buf[p + 1];
      continue;
    }
    out += buf.toString("latin1", p + 1, p + 1 + l).toLowerCase() + ".";
    p += l + 1;
  }
  return out === "" ? "." : out;
}

/** Offset of the message's TSIG record (its owner name) when its last record is one, else -1; -1 too
 * for a message that does not walk. */
export function tsigOffset(msg: Buffer): number {
  let p = 12;
  for (let i = msg.readUInt16BE(4); i > 0; i--) {
    p = skipName(msg, p, msg.length);
    if (p < 0) return -1;
    p += 4;
  }
  const records = msg.readUInt16BE(6) + msg.readUInt16BE(8) + msg.readUInt16BE(10);
  for (let i = 0; i < records; i++) {
    const last = p;
    p = skipName(msg, p, msg.length);
    if (p < 0 || p + 10 > msg.length) return -1;
    const type = msg.readUInt16BE(p);
    p += 10 + msg.readUInt16BE(p + 8);
    if (i === records - 1) return type === Type.TSIG && p === msg.length ? last : -1;
  }
  return -1;
}
