// The hot path's view of a query: header, question and EDNS read straight off the packet, every
// section walked once to reject malformed input, nothing decoded that the fast path does not need.
// Plain loops over the Buffer, no exceptions for bad input (a failure is a value), and nothing
// allocated on success when the caller passes the object to scan into: the answer store's key is
// written into that object's own octets and hashed there; the Edns and the text qname are built on
// first read, which a cache hit without log hooks never does.

import type { Edns, Msg } from "./message.ts";
import { labelText } from "./name.ts";
import { IPV4_APART, MAX_KEY, VIEW_OCTET, hashBytes } from "./key.ts";
import { metaRecordMalformed, metaRecordMisplaced, optRecord, skipName } from "./walk.ts";
import { Class, EDNS_UDP_SIZE, EdnsOption, Opcode, PLAIN_UDP_SIZE, Rcode, Type } from "./constants.ts";

/** A query that may be answered: what the fast path and the plugin chain need from it. */
export interface Scanned {
  id: number;
  opcode: number;
  rd: boolean;
  cd: boolean;
  ad: boolean;
  /** Canonical (name.ts): ASCII-lowercase, absolute, "." for the root, odd octets escaped.
   * A getter on what scanQuery returns (computed once, on first read): spreading the object drops it. */
  readonly qname: string;
  qtype: number;
  qclass: number;
  /** Offset just past the question: bytes 12..questionEnd are the client's question, to echo. */
  questionEnd: number;
  /** The query's OPT record decoded (built on first read), undefined without one. */
  readonly edns: Edns | undefined;
  /** The OPT record's UDP payload size, 0 without one: what the fast path needs of it. */
  udpSize: number;
  /** The OPT record's DO bit. */
  dnssecOk: boolean;
  /** Answer-store key (key.ts): the question's name octets ASCII-lowercased, its type and
   * class octets as they are, and "0" (no OPT), "1" (OPT) or "2" (OPT with DO), with 0x04 added for a
   * local EDNS option, 0x08 for the CD bit (a validating upstream answers a CD query differently) and
   * 0x40 for an NSID request (RFC 5001: its reply carries the server's identifier, which no other reply
   * may): keyBytes[0..keyLength), hashed into keyHash. */
  readonly keyBytes: Uint8Array;
  readonly keyLength: number;
  readonly keyHash: number;
  /** The key as a latin1 string (built on first read: tests and the slow path). */
  readonly key: string;
}

/** A packet that gets no answer at all. */
export interface ScanDrop {
  readonly drop: true;
}

/** A packet that gets only an error reply; what errorReply needs to build it. */
export interface ScanError {
  readonly drop: false;
  readonly rcode: number;
  readonly id: number;
  readonly opcode: number;
  readonly rd: boolean;
  readonly cd: boolean;
  /** Offset just past the question when there was exactly one and it parsed, else 0 (no echo). */
  readonly questionEnd: number;
  /** The query carries a record of type OPT that a walk of the message reaches, well formed or not:
   * the reply carries one too (RFC 6891 7). */
  readonly edns: boolean;
  /** That OPT record's DO bit (RFC 3225: copied into the reply). */
  readonly do: boolean;
  /** Offset of the query's TSIG record when the rcode is NOTAUTH (its key is unknown), else -1. */
  readonly tsig: number;
  /** The TSIG error of the reply's unsigned TSIG record: BADKEY unless a key's check says BADSIG. */
  readonly tsigError?: number;
}

export type ScanFailure = ScanDrop | ScanError;

const DROP: ScanDrop = Object.freeze({ drop: true });

/**
 * Reads one query. Rules, first match wins:
 * - under 12 octets or QR=1 -> drop (never answer a response);
 * - opcode other than QUERY and NOTIFY -> NOTIMP, with RD and CD clear (they are defined for QUERY
 *   only); a NOTIFY (RFC 1996) passes, and the pipeline hands it to a block that takes it (secondary);
 * - QDCOUNT other than 1, a question that does not parse, a malformed record or trailing octets ->
 *   FORMERR;
 * - OPT outside the additional section, more than one OPT, or an OPT owner other than the root ->
 *   FORMERR; a TSIG record that is not the last record of the additional section (RFC 8945 5.1), or
 *   whose rdata does not parse -> FORMERR;
 * - a TSIG record -> NOTAUTH, its TSIG error BADKEY (RFC 8945 5.2.1): clusterdns holds no keys, so
 *   every key is unknown, and an unsigned answer must not pass for an authenticated one;
 * - OPT version other than 0 -> BADVERS; and before any rule above but the malformed ones (the
 *   opcode, QDCOUNT, a TSIG): a message that parses with one OPT record of another version is
 *   answered BADVERS (RFC 6891 6.1.3, BIND's order; failure() sees to it);
 * - QTYPE 0 (reserved, RFC 6895 3.1), OPT or TSIG (meta-types that live only in the additional
 *   section, RFC 6891 6.1.1, RFC 8945 4.2) -> FORMERR; QTYPE TKEY (key negotiation, RFC 2930), MAILB
 *   or MAILA (RFC 1035 3.2.3, obsolete) -> NOTIMP. BIND answers these the same way.
 *
 * Every error reply carries an OPT record when the packet has one that a walk of it reaches, well
 * formed or not (RFC 6891 7).
 *
 * Stricter than RFC 1035 in one place, so that the question bytes alone identify the question (the
 * answer cache keys on them and echoes them): the question may hold no compression pointer (a pointer
 * there could only reach the header or loop). Any octet may sit in a label (RFC 2181 11), "." too:
 * the text qname escapes it (name.ts).
 *
 * One function (105 lines) on purpose: it is every query's first step, one pass over the packet whose
 * state (offset, counts, the first OPT and TSIG) stays in locals; its error paths are failure()'s.
 */
export function scanQuery(buf: Buffer, into?: ScannedQuery, len = buf.length): ScannedQuery | ScanFailure {
  const result = into ?? new ScannedQuery();
  const scratch = result.keyBytes;
  if (len < 12 || (buf[2] & 0x80) !== 0) return DROP;
  const opcode = (buf[2] >> 3) & 0x0f;
  const qdcount = (buf[4] << 8) | buf[5];
  const known = opcode === Opcode.QUERY || opcode === Opcode.NOTIFY;
  let rcode: number = !known ? Rcode.NOTIMP : qdcount !== 1 ? Rcode.FORMERR : Rcode.NOERROR;

  // The question, its name copied ASCII-lowercased into scratch (the key) on the way.
  let p = 12;
  let questionEnd = 0;
  let keyLen = 0;
  if (qdcount === 1) {
    for (;;) {
      if (p >= len) return failure(buf, len, rcode || Rcode.FORMERR, 0);
      const l = buf[p];
      if (l === 0) break;
      // Also rejects pointers (0xc0) and the reserved label types 0x40 and 0x80.
      if (l > 63 || p + l - 12 + 2 > 255 || p + l >= len) {
        return failure(buf, len, rcode || Rcode.FORMERR, 0);
      }
      scratch[keyLen++] = l;
      for (let i = p + 1, end = p + 1 + l; i < end; i++) {
        let c = buf[i];
        if (c >= 0x41 && c <= 0x5a) c |= 0x20;
        scratch[keyLen++] = c;
      }
      p += l + 1;
    }
    scratch[keyLen++] = 0;
    p++;
    if (p + 4 > len) return failure(buf, len, rcode || Rcode.FORMERR, 0);
    p += 4;
    questionEnd = p;
  } else {
    // Walked only to find an OPT record for the error reply.
    for (let i = 0; i < qdcount; i++) {
      p = skipName(buf, p, len, len);
      if (p < 0 || p + 4 > len) return failure(buf, len, rcode, 0);
      p += 4;
    }
  }

  // Answer, authority and additional: lengths only, and the OPT record.
  const ancount = (buf[6] << 8) | buf[7];
  const nscount = (buf[8] << 8) | buf[9];
  const arcount = (buf[10] << 8) | buf[11];
  const records = ancount + nscount + arcount;
  const additionalFrom = ancount + nscount;
  let opt = -1; // offset of the first OPT record's TYPE field
  let optCount = 0;
  let optBad = false;
  let tsig = -1; // offset of the TSIG record
  let tsigBad = false;
  for (let i = 0; i < records; i++) {
    const start = p;
    p = skipName(buf, p, len, len);
    if (p < 0 || p + 10 > len) return failure(buf, len, rcode || Rcode.FORMERR, questionEnd);
    const type = (buf[p] << 8) | buf[p + 1];
    const rdlen = (buf[p + 8] << 8) | buf[p + 9];
    const end = p + 10 + rdlen;
    if (end > len) return failure(buf, len, rcode || Rcode.FORMERR, questionEnd);
    if (type === Type.TSIG || type === Type.OPT) {
      const bad =
        metaRecordMisplaced(type, i, records, additionalFrom) || metaRecordMalformed(buf, start, p, end, len);
      if (type === Type.TSIG) {
        if (bad) tsigBad = true;
        else tsig = start;
      } else {
        optCount++;
        if (bad) optBad = true;
        else if (opt < 0) opt = p;
      }
    }
    p = end;
  }
  if (p !== len || optBad || optCount > 1 || tsigBad) rcode ||= Rcode.FORMERR;
  else if (tsig >= 0) rcode ||= Rcode.NOTAUTH;
  else if (opt >= 0 && buf[opt + 5] !== 0) rcode ||= Rcode.BADVERS;
  else rcode ||= qtypeRcode((buf[questionEnd - 4] << 8) | buf[questionEnd - 3]);
  if (rcode !== Rcode.NOERROR) return failure(buf, len, rcode, questionEnd, tsig);

  let ednsState = 0x30; // "0"
  if (opt >= 0) {
    ednsState = (buf[opt + 6] & 0x80) !== 0 ? 0x32 : 0x31;
    // A local/experimental option (RFC 6891: 65001-65534) means what this server says it means
    // (clusterdns's explain), and an NSID request gets the server's identifier (RFC 5001): such
    // queries get answers of their own in the cache.
    const end = opt + 10 + ((buf[opt + 8] << 8) | buf[opt + 9]);
    for (let o = opt + 10; o < end; o += 4 + ((buf[o + 2] << 8) | buf[o + 3])) {
      const code = (buf[o] << 8) | buf[o + 1];
      if (code >= 65001 && code <= 65534) ednsState |= 0x04;
      else if (code === EdnsOption.NSID) ednsState |= 0x40;
    }
  }
  scratch[keyLen++] = buf[questionEnd - 4];
  scratch[keyLen++] = buf[questionEnd - 3];
  scratch[keyLen++] = buf[questionEnd - 2];
  scratch[keyLen++] = buf[questionEnd - 1];
  if ((buf[3] & 0x10) !== 0) ednsState |= 0x08;
  scratch[keyLen++] = ednsState;
  result.read(buf, opcode, questionEnd, opt, keyLen);
  return result;
}

/** A query scanQuery accepted. The fast path scans into one object again and again (no allocation per
 * query); whoever keeps a query past the current turn keeps copy(). */
export class ScannedQuery implements Scanned {
  id = 0;
  opcode = 0;
  rd = false;
  cd = false;
  ad = false;
  qtype = 0;
  qclass = 0;
  questionEnd = 0;
  udpSize = 0;
  dnssecOk = false;
  readonly keyBytes: Uint8Array;
  keyLength = 0;
  keyHash = 0;
  /** The packet and its OPT record's TYPE field (-1: none), for `edns` on first read. */
  #buf: Buffer | undefined = undefined;
  #opt = -1;
  #edns: Edns | undefined | null = null;
  #qname: string | undefined = undefined;
  #key: string | undefined = undefined;

  constructor(keyBytes = new Uint8Array(MAX_KEY)) {
    this.keyBytes = keyBytes;
  }

  /** Fills this object from an accepted packet whose key is in keyBytes[0..keyLength). */
  read(buf: Buffer, opcode: number, questionEnd: number, opt: number, keyLength: number): void {
    this.id = (buf[0] << 8) | buf[1];
    this.opcode = opcode;
    this.rd = (buf[2] & 0x01) !== 0;
    this.cd = (buf[3] & 0x10) !== 0;
    this.ad = (buf[3] & 0x20) !== 0;
    this.qtype = (buf[questionEnd - 4] << 8) | buf[questionEnd - 3];
    this.qclass = (buf[questionEnd - 2] << 8) | buf[questionEnd - 1];
    this.questionEnd = questionEnd;
    this.udpSize = opt >= 0 ? (buf[opt + 2] << 8) | buf[opt + 3] : 0;
    this.dnssecOk = opt >= 0 && (buf[opt + 6] & 0x80) !== 0;
    this.keyLength = keyLength;
    this.keyHash = hashBytes(this.keyBytes, 0, keyLength);
    this.#buf = buf;
    this.#opt = opt;
    this.#edns = null;
    this.#qname = undefined;
    this.#key = undefined;
  }

  /** A copy of its own, for a query answered after the current turn: `buf` is the packet's own copy
   * when the one scanned is about to be reused. */
  copy(buf = this.#buf!): ScannedQuery {
    const c = new ScannedQuery(this.keyBytes.slice(0, this.keyLength));
    c.read(buf, this.opcode, this.questionEnd, this.#opt, this.keyLength);
    c.#qname = this.#qname; // the same name: not built twice
    return c;
  }

  /** Puts a view's octet (1-255, 0 for none) in the key (key.ts, VIEW_OCTET) and hashes it again: the
   * replies of one view are then never another's. Only for a class under 256 (the octet is its). */
  keyView(view: number): void {
    this.keyBytes[this.keyLength - VIEW_OCTET] = view;
    this.#rehash();
  }

  /** Keys this query apart from the same question of an IPv6 client (key.ts IPV4_APART). */
  keyApartForIPv4(): void {
    this.keyBytes[this.keyLength - 1] &= ~IPV4_APART;
    this.#rehash();
  }

  #rehash(): void {
    this.keyHash = hashBytes(this.keyBytes, 0, this.keyLength);
    this.#key = undefined;
  }

  /** The packet read (for a copy(), its own copy). */
  get packet(): Buffer {
    return this.#buf!;
  }

  /** The state octet of the key (its last). */
  get keyState(): number {
    return this.keyBytes[this.keyLength - 1];
  }

  get key(): string {
    if (this.#key === undefined) {
      let k = "";
      for (let i = 0; i < this.keyLength; i++) k += String.fromCharCode(this.keyBytes[i]);
      this.#key = k;
    }
    return this.#key;
  }

  get edns(): Edns | undefined {
    if (this.#edns === null) this.#edns = this.#opt < 0 ? undefined : readEdns(this.#buf!, this.#opt);
    return this.#edns;
  }

  /** The key starts with the lowercased wire name: its labels' text forms joined with "." are the
   * qname. */
  get qname(): string {
    if (this.#qname === undefined) this.#qname = nameText(this.keyBytes);
    return this.#qname;
  }
}

const nameScratch = Buffer.allocUnsafe(256);

/** The text form of the wire name at the start of `wire` (name.ts): one string, built in a scratch
 * when no octet needs an escape (every name a client asks in practice), label by label otherwise. */
function nameText(wire: Uint8Array): string {
  let n = 0;
  let plain = true;
  for (let p = 0, l = wire[0]; l !== 0; p += l + 1, l = wire[p]) {
    for (let i = p + 1; i <= p + l; i++) {
      const c = wire[i];
      // 0x21-0x7e but "." and "\\": the octets a label's text holds as they are.
      if (c < 0x21 || c > 0x7e || c === 0x2e || c === 0x5c) plain = false;
      nameScratch[n++] = c;
    }
    nameScratch[n++] = 0x2e;
  }
  if (n === 0) return ".";
  if (plain) return nameScratch.toString("latin1", 0, n);
  let name = "";
  for (let p = 0, l = wire[0]; l !== 0; p += l + 1, l = wire[p]) {
    let label = "";
    for (let i = p + 1; i <= p + l; i++) label += String.fromCharCode(wire[i]);
    name += labelText(label) + ".";
  }
  return name;
}

/** The OPT record whose TYPE field is at `opt`, decoded; its options copied out of the packet. */
function readEdns(buf: Buffer, opt: number): Edns {
  const edns: Edns = {
    udpSize: (buf[opt + 2] << 8) | buf[opt + 3],
    version: 0,
    do: (buf[opt + 6] & 0x80) !== 0,
    options: [],
  };
  const end = opt + 10 + ((buf[opt + 8] << 8) | buf[opt + 9]);
  for (let o = opt + 10; o < end;) {
    const olen = (buf[o + 2] << 8) | buf[o + 3];
    edns.options.push({
      code: (buf[o] << 8) | buf[o + 1],
      data: new Uint8Array(buf.subarray(o + 4, o + 4 + olen)),
    });
    o += 4 + olen;
  }
  return edns;
}

/** The error reply's terms for a packet the scan refused with `rcode`. Its OPT record is looked for
 * here, by a walk of the whole message of its own (the scan stops at the first thing it refuses):
 * RFC 6891 7 asks for an OPT in every reply to a query that has one, and 6.1.3 for BADVERS to a
 * version other than 0, before anything else the query asks (as BIND does: only a message that does
 * not parse, or whose OPT record is not the one well-formed one, stays FORMERR). */
function failure(buf: Buffer, len: number, rcode: number, questionEnd: number, tsig = -1): ScanError {
  const opcode = (buf[2] >> 3) & 0x0f;
  const opt = optRecord(buf, len);
  if (opt.wellFormed && buf[opt.at + 5] !== 0) rcode = Rcode.BADVERS;
  const query = opcode === Opcode.QUERY;
  return {
    drop: false,
    rcode,
    id: (buf[0] << 8) | buf[1],
    opcode,
    rd: query && (buf[2] & 0x01) !== 0,
    cd: query && (buf[3] & 0x10) !== 0,
    questionEnd,
    edns: opt.at >= 0,
    do: opt.at >= 0 && (buf[opt.at + 6] & 0x80) !== 0,
    tsig: rcode === Rcode.NOTAUTH ? tsig : -1,
  };
}

/** The rcode for a QTYPE no query may ask for (see scanQuery), else NOERROR. */
function qtypeRcode(qtype: number): number {
  switch (qtype) {
    case 0:
    case Type.OPT:
    case Type.TSIG:
      return Rcode.FORMERR;
    case Type.TKEY:
    case Type.MAILB:
    case Type.MAILA:
      return Rcode.NOTIMP;
  }
  return Rcode.NOERROR;
}

/** TSIG error "key not recognized" (RFC 8945 4.3). */
const TSIG_BADKEY = 17;

/**
 * The reply to a packet scanQuery refused: the query's ID and opcode, its RD and CD bits for QUERY,
 * QR=1, the rcode, the question when it parsed, an OPT record when the query had one or the rcode
 * needs one, and for NOTAUTH the unsigned TSIG record RFC 8945 5.3.2 asks for: the query's key name,
 * algorithm, time signed, fudge and original ID, an empty MAC and error BADKEY. That TSIG record is
 * left out when it would take the reply over 512 octets (only names of ~450 octets together do), so
 * the reply always fits a plain UDP client: 12 + 259 + 11 octets without it.
 */
export function errorReply(query: Buffer, f: ScanFailure & { drop: false }): Buffer {
  const qlen = f.questionEnd > 12 ? f.questionEnd - 12 : 0;
  const withOpt = f.edns || f.rcode > 15;
  const head = 12 + qlen + (withOpt ? 11 : 0);
  let tsig = f.tsig >= 0 ? badKey(query, f.tsig, f.tsigError ?? TSIG_BADKEY) : undefined;
  if (tsig !== undefined && head + tsig.length > PLAIN_UDP_SIZE) tsig = undefined;
  const out = Buffer.alloc(head + (tsig?.length ?? 0));
  out[0] = query[0];
  out[1] = query[1];
  out[2] = 0x80 | ((f.opcode & 0x0f) << 3) | (f.rd ? 0x01 : 0);
  out[3] = (f.cd ? 0x10 : 0) | (f.rcode & 0x0f);
  out[5] = qlen > 0 ? 1 : 0;
  out[11] = (withOpt ? 1 : 0) + (tsig !== undefined ? 1 : 0);
  if (qlen > 0) query.copy(out, 12, 12, f.questionEnd);
  if (withOpt) {
    // Owner root (already 0), TYPE OPT, CLASS = our UDP size, TTL = ext-rcode, version 0, DO.
    const o = 12 + qlen;
    out[o + 2] = Type.OPT;
    out.writeUInt16BE(EDNS_UDP_SIZE, o + 3);
    out[o + 5] = (f.rcode >> 4) & 0xff;
    out[o + 7] = f.do ? 0x80 : 0;
  }
  if (tsig !== undefined) out.set(tsig, head);
  return out;
}

/** The unsigned BADKEY TSIG record answering the query's TSIG record at `at`; names written whole
 * (RFC 8945 4.2: not compressed). scanQuery has checked the record. */
function badKey(query: Buffer, at: number, error: number): Buffer {
  const owner = nameOctets(query, at);
  const p = skipName(query, at, query.length); // TYPE
  const alg = nameOctets(query, p + 10);
  const times = skipName(query, p + 10, query.length); // time signed, fudge, MAC size
  const origId = times + 10 + ((query[times + 8] << 8) | query[times + 9]);
  const rdata = Buffer.alloc(alg.length + 16);
  rdata.set(alg);
  query.copy(rdata, alg.length, times, times + 8);
  // MAC size 0 (already), original ID, error BADKEY, other length 0.
  query.copy(rdata, alg.length + 10, origId, origId + 2);
  rdata.writeUInt16BE(error, alg.length + 12);
  const fixed = Buffer.from([0, Type.TSIG, 0, Class.ANY, 0, 0, 0, 0, rdata.length >> 8, rdata.length & 0xff]);
  return Buffer.concat([owner, fixed, rdata]);
}

/** The name at `off` written whole, pointers followed (skipName has checked it). */
function nameOctets(buf: Buffer, off: number): Buffer {
  const parts: Buffer[] = [];
  let p = off;
  for (let l = buf[p]; l !== 0; l = buf[p]) {
    if (l >= 0xc0) {
      p = ((l & 0x3f) << 8) | buf[p + 1];
      continue;
    }
    parts.push(buf.subarray(p, p + 1 + l));
    p += l + 1;
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** The decoded query for the plugin chain (the slow path). Other sections of a query are not kept. */
export function toQueryMsg(s: Scanned): Msg {
  return {
    id: s.id,
    qr: false,
    opcode: s.opcode,
    aa: false,
    tc: false,
    rd: s.rd,
    ra: false,
    ad: s.ad,
    cd: s.cd,
    rcode: 0,
    question: [{ name: s.qname, type: s.qtype, class: s.qclass }],
    answer: [],
    authority: [],
    additional: [],
    edns: s.edns,
  };
}

/** The question's name as the client spelled it (0x20 mixed case), in the text form of Scanned.qname,
 * or undefined when it is already canonical: `buf` is a query scanQuery accepted, whose question name
 * starts at 12, uncompressed. */
export function spelledQname(buf: Buffer, questionEnd: number): string | undefined {
  const end = questionEnd - 5;
  let upper = false;
  for (let i = 12; i < end; i++) {
    if (buf[i] >= 0x41 && buf[i] <= 0x5a) {
      upper = true;
      break;
    }
  }
  if (!upper) return undefined;
  let name = "";
  for (let p = 12, l = buf[p]; l !== 0; p += l + 1, l = buf[p]) {
    name += labelText(buf.toString("latin1", p + 1, p + 1 + l)) + ".";
  }
  return name;
}
