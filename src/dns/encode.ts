// Msg -> wire (RFC 1035 4.1), with name compression (4.1.4) and EDNS0 (RFC 6891). Fitting a reply to a
// client's size is fit.ts's work, on these bytes.
//
// Hand-written rather than dns2's encoder: DESIGN.md measured dns2 at ~65k parse+build+encode per
// second and ~1.8 ms for 120 A records (a bit-at-a-time writer and a Buffer per name). This one writes
// octets into one reused scratch buffer, keeps compression targets in a typed hash table (no string
// or Map entry per name written), and copies the result out once, or not at all (encodeInto: the
// answer store copies from the scratch). Encoding is synchronous, so a module-level scratch is never
// shared by two calls.

import type { Edns, Msg, RR } from "./message.ts";
import { wireRecords } from "./wire-msg.ts";
import { Type } from "./constants.ts";
import { nameToWire } from "./name.ts";
import { FNV_OFFSET, FNV_PRIME } from "./key.ts";
import { SoaTemplate } from "./soa-template.ts";
import { ipv4Octets, ipv6Octets } from "./address-octets.ts";

/** A message that cannot be put on the wire: a bug in whoever built it, never the client's fault. */
export class EncodeError extends Error {
  readonly code = "CDNS_ERR_ENCODE";
  constructor(message: string) {
    super(message);
    this.name = "EncodeError";
  }
}

const MAX_MESSAGE = 65535;
/** Compression pointers have 14 bits of offset. */
const MAX_POINTER = 0x3fff;

// Holds a full message, one more record of the largest size (name 255, fixed 10, rdata 65535), an OPT.
const buf = Buffer.allocUnsafe(2 * MAX_MESSAGE + 255 + 10 + 64);
let off = 0;

// Compression targets: the hash of a lowercased wire suffix -> the offset where it was written, in an
// open-addressed table cleared by a new stamp per message. A hash match is confirmed against the
// octets at that offset, so a collision costs a comparison, never a wrong pointer.
const TARGETS = 16384;
/** Targets added per message at most (half the table): later names are written whole. */
const MAX_TARGETS = TARGETS / 2;
const targetHash = new Int32Array(TARGETS);
const targetAt = new Int32Array(TARGETS);
const targetStamp = new Int32Array(TARGETS);
let stamp = 0;
let targetCount = 0;

/** The first question's name when encodeInto wrote it from octets: its owners point to 12 (writeName). */
let questionName: string | undefined;

/** Where the question section ends. The server writes the client's bytes over the first question
 * (0x20), so a name pointing into it takes the client's spelling. */
let questionEnd = 0;

/** Records written per section by the current encoding. */
const counts = new Int32Array(3);

/** The first question's name as octets (lowercase wire form) instead of its text: encodeInto's. */
let rawName: Uint8Array | undefined;
let rawFrom = 0;
let rawLength = 0;

/** SOA records of negative answers kept as octets (soa-template.ts): one per zone and serial, a few. */
const soaTemplates: (SoaTemplate | undefined)[] = [undefined, undefined, undefined, undefined];
let nextTemplate = 0;
/** Negative answers whose SOA was copied from a template: tests read it. */
export const soaCopies = { count: 0 };

/**
 * Encodes `msg` whole. Fitting it to a client's size is fitReply's work (fit.ts), on these bytes.
 * A message holds at most 65535 octets: the records that would run past that (with room kept for the
 * OPT record) are left out, with TC=1 when one of them belonged to the answer or authority section.
 * An OPT RR is written from `msg.edns` only; type-41 records in `msg.additional` are skipped.
 * Throws EncodeError (CDNS_ERR_ENCODE) for what no valid message holds: rcode above 15 without edns,
 * a label over 63 octets, a name over 255, an empty label, a bad escape or a character above U+00FF
 * in a name, a character above U+00FF in a string, a malformed address, a field out of range.
 */
export function encode(msg: Msg): Buffer {
  if (!Number.isInteger(msg.rcode) || msg.rcode < 0 || msg.rcode > 0xfff) {
    throw new EncodeError(`rcode ${msg.rcode} is not a 12-bit number`);
  }
  if (msg.rcode > 15 && msg.edns === undefined) {
    throw new EncodeError(`rcode ${msg.rcode} needs an OPT record (msg.edns) for its upper bits`);
  }
  write(msg);
  // Its own ArrayBuffer: a reply kept in the answer cache must not pin an 8 KiB pool slab.
  const out = Buffer.allocUnsafeSlow(off);
  buf.copy(out, 0, 0, off);
  return out;
}

/**
 * encode() into the scratch, without copying it out: returns the length; the octets are encoded()'s
 * until the next encoding. With `name`, the first question's name is written from those octets (the
 * wire form, lowercased, as a query's key holds it) instead of from its text: a name asked once is
 * then never prepared. Throws what encode() throws.
 */
export function encodeInto(msg: Msg, name?: Uint8Array, from = 0, length = 0): number {
  if (msg.rcode > 15 && msg.edns === undefined) {
    throw new EncodeError(`rcode ${msg.rcode} needs an OPT record (msg.edns) for its upper bits`);
  }
  rawName = name;
  rawFrom = from;
  rawLength = length;
  try {
    write(msg);
  } finally {
    rawName = undefined;
  }
  return off;
}

/** The scratch encodeInto() wrote to. */
export function encoded(): Buffer {
  return buf;
}

/** One pass into the scratch. */
function write(msg: Msg): void {
  questionName = undefined;
  if (++stamp === 0x7fffffff) {
    stamp = 1;
    targetStamp.fill(0);
  }
  targetCount = 0;
  off = 12;
  questionEnd = 0;
  // A negative answer behind a question from octets: its SOA may be copied (soa-template.ts), and
  // the question then needs no compression targets.
  // (Records still as octets are left so: reading a WireMsg's sections decodes them.)
  const raw = wireRecords(msg);
  const soa = rawName !== undefined && raw === undefined ? negativeSoa(msg) : undefined;
  const template = soa !== undefined ? templateFor(soa) : undefined;
  const zoneAt = template !== undefined ? template.zoneAt(rawName!, rawFrom, rawLength) : -1;
  const qdcount = writeQuestions(msg, zoneAt >= 0);
  questionEnd = off;
  let optLen = 0;
  if (msg.edns !== undefined) {
    optLen = 11;
    const options = msg.edns.options;
    for (let i = 0; i < options.length; i++) optLen += 4 + options[i].data.length;
  }
  if (off + optLen > MAX_MESSAGE) throw new EncodeError(`question and OPT take ${off + optLen} octets`);
  const limit = MAX_MESSAGE - optLen;
  counts[0] = counts[1] = counts[2] = 0;
  // Records still as they came (a forwarded reply nobody read) keep their octets and offsets, so their
  // compression pointers still land (the question has the same length).
  const copied = raw !== undefined && off === raw.questionEnd && raw.end <= limit;
  let cut = false;
  if (copied) {
    counts.set(raw.counts);
    off += raw.wire.copy(buf, off, off, raw.end);
  } else if (zoneAt >= 0 && off + template!.length <= limit) {
    off = template!.writeAt(buf, off, 12 + zoneAt);
    counts[1] = 1;
    soaCopies.count++;
  } else {
    // An answer or authority record was left out.
    cut = writeSections(msg, limit);
    if (soa !== undefined && template === undefined && counts[1] === 1) learnSoa(soa);
  }
  if (msg.edns !== undefined) writeOpt(msg.edns, msg.rcode);

  check16(msg.id, "id");
  if (!Number.isInteger(msg.opcode) || msg.opcode < 0 || msg.opcode > 15) {
    throw new EncodeError(`opcode ${msg.opcode} is not a 4-bit number`);
  }
  const arcount = counts[2] + (msg.edns !== undefined ? 1 : 0);
  buf[0] = msg.id >> 8;
  buf[1] = msg.id;
  buf[2] =
    (msg.qr ? 0x80 : 0) |
    (msg.opcode << 3) |
    (msg.aa ? 0x04 : 0) |
    (msg.tc || cut ? 0x02 : 0) |
    (msg.rd ? 0x01 : 0);
  buf[3] = (msg.ra ? 0x80 : 0) | (msg.ad ? 0x20 : 0) | (msg.cd ? 0x10 : 0) | (msg.rcode & 0x0f);
  buf[4] = qdcount >> 8;
  buf[5] = qdcount;
  buf[6] = counts[0] >> 8;
  buf[7] = counts[0];
  buf[8] = counts[1] >> 8;
  buf[9] = counts[1];
  buf[10] = arcount >> 8;
  buf[11] = arcount;
}

/** Writes the questions from 12 on, the first from rawName's octets when set (with no compression
 * targets when `copiedSoa`: nothing will point into it but the copied SOA); their count. */
function writeQuestions(msg: Msg, copiedSoa: boolean): number {
  const questions = msg.question;
  for (let i = 0; i < questions.length; i++) {
    const q = questions[i];
    // The first question goes uncompressed at 12: the server overwrites it with the client's bytes.
    if (i === 0 && rawName !== undefined) {
      if (copiedSoa) copyRawName(rawName, rawFrom, rawLength);
      else writeRawName(rawName, rawFrom, rawLength);
      questionName = q.name;
    } else {
      writeName(q.name, i > 0);
    }
    u16(q.type, "question type");
    u16(q.class, "question class");
    if (off > MAX_MESSAGE) throw new EncodeError(`${i + 1} questions take more than ${MAX_MESSAGE} octets`);
  }
  return questions.length;
}

/** The SOA of a negative answer (no record but it with a name to write), or undefined. */
function negativeSoa(msg: Msg): RR | undefined {
  if (msg.question.length !== 1 || msg.answer.length !== 0 || msg.authority.length !== 1) return undefined;
  const additional = msg.additional;
  for (let i = 0; i < additional.length; i++) if (additional[i].type !== Type.OPT) return undefined;
  const rr = msg.authority[0];
  return rr.type === Type.SOA && "mname" in rr.data ? rr : undefined;
}

function templateFor(rr: RR): SoaTemplate | undefined {
  for (let i = 0; i < soaTemplates.length; i++) {
    const t = soaTemplates[i];
    if (t !== undefined && t.matches(rr)) return t;
  }
  return undefined;
}

/** Keeps the SOA record just written behind the raw question as a template, when it can be one. */
function learnSoa(rr: RR): void {
  const t = SoaTemplate.learn(rr, buf, rawLength, questionEnd, off);
  if (t === undefined) return;
  soaTemplates[nextTemplate] = t;
  nextTemplate = (nextTemplate + 1) % soaTemplates.length;
}

/** Writes the records of the three sections while they fit under `limit`, counting them: true when an
 * answer or authority record was left out. */
function writeSections(msg: Msg, limit: number): boolean {
  for (let s = 0; s < 3; s++) {
    const section = s === 0 ? msg.answer : s === 1 ? msg.authority : msg.additional;
    for (let i = 0; i < section.length; i++) {
      const rr = section[i];
      if (rr.type === Type.OPT) continue;
      const start = off;
      writeRR(rr);
      if (off > limit) {
        // Only the OPT record follows, so no name will point at a target set inside this record.
        off = start;
        return s < 2;
      }
      counts[s]++;
    }
  }
  return false;
}

function writeRR(rr: RR): void {
  writeName(rr.name, true);
  u16(rr.type, "type");
  u16(rr.class, "class");
  // TTLs are 31 bits (RFC 2181 8); a negative one (a countdown gone past zero) is sent as 0.
  const ttl = rr.ttl <= 0 ? 0 : rr.ttl >= 0x7fffffff ? 0x7fffffff : rr.ttl >>> 0;
  buf.writeUInt32BE(ttl, off);
  const lenAt = off + 4;
  off += 6;
  const d = rr.data;
  if ("raw" in d) {
    if (d.raw.length > MAX_MESSAGE) throw new EncodeError(`rdata of ${rr.name} is ${d.raw.length} octets`);
    buf.set(d.raw, off);
    off += d.raw.length;
  } else {
    if (d.type !== rr.type)
      throw new EncodeError(`record ${rr.name} has type ${rr.type} but rdata of ${d.type}`);
    switch (d.type) {
      case Type.A:
        writeA(d.address);
        break;
      case Type.AAAA:
        writeAAAA(d.address);
        break;
      case Type.NS:
      case Type.CNAME:
      case Type.PTR:
        writeName(d.target, true);
        break;
      case Type.MX:
        u16(d.preference, "MX preference");
        writeName(d.exchange, true);
        break;
      case Type.SOA:
        writeName(d.mname, true);
        writeName(d.rname, true);
        u32(d.serial, "SOA serial");
        u32(d.refresh, "SOA refresh");
        u32(d.retry, "SOA retry");
        u32(d.expire, "SOA expire");
        u32(d.minimum, "SOA minimum");
        break;
      case Type.TXT:
        writeTxt(d.strings);
        break;
      case Type.SRV:
        u16(d.priority, "SRV priority");
        u16(d.weight, "SRV weight");
        u16(d.port, "SRV port");
        writeName(d.target, false); // RFC 2782: the target is never compressed
        break;
      case Type.CAA:
        writeCaa(d.flags, d.tag, d.value);
        break;
    }
  }
  const rdlen = off - lenAt - 2;
  buf[lenAt] = rdlen >> 8;
  buf[lenAt + 1] = rdlen;
}

function writeOpt(edns: Edns, rcode: number): void {
  buf[off++] = 0; // owner: root
  buf[off++] = 0;
  buf[off++] = Type.OPT;
  u16(edns.udpSize, "EDNS UDP size");
  if (!Number.isInteger(edns.version) || edns.version < 0 || edns.version > 255)
    throw new EncodeError(`EDNS version ${edns.version} is not an octet`);
  buf[off++] = rcode >> 4;
  buf[off++] = edns.version;
  buf[off++] = edns.do ? 0x80 : 0;
  buf[off++] = 0;
  const lenAt = off;
  off += 2;
  for (const o of edns.options) {
    u16(o.code, "EDNS option code");
    buf[off++] = o.data.length >> 8;
    buf[off++] = o.data.length;
    buf.set(o.data, off);
    off += o.data.length;
  }
  const rdlen = off - lenAt - 2;
  buf[lenAt] = rdlen >> 8;
  buf[lenAt + 1] = rdlen;
}

/** Where each label of the name being written starts in buf. */
const labelAt = new Int32Array(128);

/**
 * Writes a name (the text form of name.ts, escapes and all; relative names are taken as absolute),
 * pointing at an earlier copy of its longest known suffix when `compress` is set. Every suffix written
 * in place below offset 0x4000 becomes a target, whether or not this name itself was compressed.
 * The wire form goes straight into the scratch from the text (a name with an escape is parsed first),
 * and the suffixes are looked up there: nothing is allocated or kept per name. A name written whole
 * (an SRV target) replaces the question as the target of its suffixes (encodeInto's pointer to 12 too):
 * pointing into the question gives a name the client's spelling, so the address records of an SRV
 * target would not be owned by the target's name as spelled (CoreDNS's handler_case_test.go), while
 * pointing at the target gives them exactly its spelling.
 */
function writeName(name: string, compress: boolean): void {
  if (name === "." || name === "") {
    buf[off++] = 0;
    return;
  }
  // An owner that is the question's name (most answers' records): a pointer to it.
  if (compress && name === questionName) {
    buf[off++] = 0xc0;
    buf[off++] = 12;
    return;
  }
  const start = off;
  const count = name.includes("\\") ? copyParsed(name, start) : copyPlain(name, start);
  const end = start + wireLength;
  for (let i = 0; i < count; i++) {
    const at = labelAt[i];
    const hash = hashLower(at, end);
    if (compress) {
      const target = findTarget(hash, at, end);
      if (target >= 0) {
        off = at;
        buf[off++] = 0xc0 | (target >> 8);
        buf[off++] = target;
        return;
      }
    }
    if (at > MAX_POINTER) continue;
    if (compress) addTarget(hash, at);
    else {
      const slot = targetSlot(hash, at, end);
      if (slot < 0) addTarget(hash, at);
      else if (targetAt[slot] < questionEnd) {
        if (targetAt[slot] === 12) questionName = undefined;
        targetAt[slot] = at;
      }
    }
  }
  off = end;
}

/** Octets of the name copyPlain or copyParsed last wrote, the root octet included. */
let wireLength = 0;

/** Writes a name without escapes at buf[at..] as labels, filling labelAt; its label count. */
function copyPlain(name: string, at: number): number {
  const last = name.charCodeAt(name.length - 1) === 0x2e ? name.length - 1 : name.length;
  let count = 0;
  let lenAt = at;
  let p = at + 1;
  for (let i = 0; i <= last; i++) {
    const c = i === last ? 0x2e : name.charCodeAt(i);
    if (c !== 0x2e) {
      if (c > 0xff) throw new EncodeError(`name ${name} has a character above U+00FF`);
      buf[p++] = c;
      continue;
    }
    const len = p - lenAt - 1;
    if (len === 0) throw new EncodeError(`name ${name} has an empty label`);
    if (len > 63) throw new EncodeError(`name ${name} has a label longer than 63 octets`);
    buf[lenAt] = len;
    labelAt[count++] = lenAt;
    lenAt = p++;
  }
  buf[lenAt] = 0;
  wireLength = lenAt + 1 - at;
  if (wireLength > 255) throw new EncodeError(`name ${name} is longer than 255 octets`);
  return count;
}

/** copyPlain for a name with escapes: parsed by name.ts first. */
function copyParsed(name: string, at: number): number {
  const wire = nameToWire(name);
  if (typeof wire === "string") throw new EncodeError(`name ${name} ${wire}`);
  buf.set(wire, at);
  let count = 0;
  for (let i = 0; wire[i] !== 0; i += wire[i] + 1) labelAt[count++] = at + i;
  wireLength = wire.length;
  return count;
}

/** The hash (key.ts's) of buf[from..to) ASCII-lowercased: a suffix's compression-target key. */
function hashLower(from: number, to: number): number {
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) {
    let c = buf[i];
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    h = Math.imul(h ^ c, FNV_PRIME);
  }
  return h;
}

/** The question's name from its lowercased wire octets (a query's key), each suffix made a target. */
function writeRawName(name: Uint8Array, from: number, length: number): void {
  const start = off;
  for (let i = 0; i < length; i++) buf[off++] = name[from + i];
  for (let p = start; p < off && buf[p] !== 0; p += buf[p] + 1) {
    if (p <= MAX_POINTER) addTarget(hashLower(p, off), p);
  }
}

/** The question's name from octets, as writeRawName, when nothing will point into it but the copied
 * SOA: no targets. */
function copyRawName(name: Uint8Array, from: number, length: number): void {
  for (let i = 0; i < length; i++) buf[off++] = name[from + i];
}

function addTarget(hash: number, at: number): void {
  if (targetCount >= MAX_TARGETS) return;
  let i = hash & (TARGETS - 1);
  while (targetStamp[i] === stamp) i = (i + 1) & (TARGETS - 1);
  targetStamp[i] = stamp;
  targetHash[i] = hash;
  targetAt[i] = at;
  targetCount++;
}

/** Where the name at buf[at..end) (not yet a target) was written before, or -1. */
function findTarget(hash: number, at: number, end: number): number {
  const slot = targetSlot(hash, at, end);
  return slot < 0 ? -1 : targetAt[slot];
}

/** The table slot of the target for the name at buf[at..end), or -1. */
function targetSlot(hash: number, at: number, end: number): number {
  for (let i = hash & (TARGETS - 1); targetStamp[i] === stamp; i = (i + 1) & (TARGETS - 1)) {
    if (targetHash[i] === hash && sameName(targetAt[i], at, end)) return i;
  }
  return -1;
}

/** The name written at buf[a] (pointers followed) equals the one at buf[b..end) (no pointers), ASCII
 * case aside. */
function sameName(a: number, b: number, end: number): boolean {
  let p = a;
  let q = b;
  for (let hops = 0; hops < 128 && q < end;) {
    const l = buf[p];
    if (l >= 0xc0) {
      p = ((l & 0x3f) << 8) | buf[p + 1];
      hops++;
      continue;
    }
    if (l !== buf[q]) return false;
    if (l === 0) return true;
    for (let k = 1; k <= l; k++) {
      let x = buf[p + k];
      let y = buf[q + k];
      if (x >= 0x41 && x <= 0x5a) x |= 0x20;
      if (y >= 0x41 && y <= 0x5a) y |= 0x20;
      if (x !== y) return false;
    }
    p += l + 1;
    q += l + 1;
  }
  return false;
}

function writeTxt(strings: string[]): void {
  let total = 0;
  for (const s of strings) total += s.length === 0 ? 1 : s.length + Math.ceil(s.length / 255);
  if (total > MAX_MESSAGE) throw new EncodeError(`TXT rdata of ${total} octets`);
  for (const s of strings) {
    if (s.length === 0) {
      buf[off++] = 0;
      continue;
    }
    // Strings longer than 255 octets go out as several character-strings.
    for (let i = 0; i < s.length; i += 255) {
      const n = Math.min(255, s.length - i);
      buf[off++] = n;
      writeLatin1(s, i, i + n, "TXT string");
    }
  }
}

function writeCaa(flags: number, tag: string, value: string): void {
  if (tag.length === 0 || tag.length > 255) throw new EncodeError(`CAA tag "${tag}" is not 1-255 octets`);
  if (2 + tag.length + value.length > MAX_MESSAGE) throw new EncodeError("CAA value too long");
  if (!Number.isInteger(flags) || flags < 0 || flags > 255) throw new EncodeError(`CAA flags ${flags}`);
  buf[off++] = flags;
  buf[off++] = tag.length;
  writeLatin1(tag, 0, tag.length, "CAA tag");
  writeLatin1(value, 0, value.length, "CAA value");
}

/** Character-strings are binary: one char per octet (see text.ts). */
function writeLatin1(s: string, from: number, to: number, what: string): void {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) throw new EncodeError(`${what} has a character above U+00FF`);
    buf[off++] = c;
  }
}

function writeA(s: string): void {
  if (!ipv4Octets(s, 0, s.length, buf, off)) throw new EncodeError(`A address "${s}" is not IPv4`);
  off += 4;
}

function writeAAAA(s: string): void {
  if (!ipv6Octets(s, buf, off)) throw new EncodeError(`AAAA address "${s}" is not IPv6`);
  off += 16;
}

function check16(v: number, what: string): void {
  if ((v & 0xffff) !== v) throw new EncodeError(`${what} ${v} is not a 16-bit number`);
}

function u16(v: number, what: string): void {
  check16(v, what);
  buf[off++] = v >> 8;
  buf[off++] = v;
}

function u32(v: number, what: string): void {
  if (v >>> 0 !== v) throw new EncodeError(`${what} ${v} is not a 32-bit number`);
  buf.writeUInt32BE(v, off);
  off += 4;
}
