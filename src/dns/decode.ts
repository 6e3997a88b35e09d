// Wire -> Msg for the slow path (upstream replies, tests, tools). Safe on hostile input: every read is
// bounds-checked, names follow compression pointers only strictly backwards (scan.ts's skipName),
// every loop is bounded by the message length, and anything malformed throws DecodeError.
//
// Not dns2's Packet.parse, which was checked against what Msg needs (dns2 3.1.1) and falls short:
// TXT and CAA strings are decoded as UTF-8 (a 0xff octet becomes U+FFFD, so binary strings do not
// survive); EDNS options it has no codec for (COOKIE, padding, ...) are dropped, so options cannot be
// kept opaque; records it cannot decode are left out of the sections and only listed in
// packet.errors; trailing octets are accepted; types it has a codec for (RRSIG, DNSKEY, SPF, ...) come
// back as objects, not as the raw rdata RFC 3597 asks for; a label holding a "." octet comes back
// indistinguishable from two labels (here it is escaped); and it reads one bit at a time. It stays in the tests as an
// independent oracle for the encoder.

import type { Edns, Msg, Question, RData, RR } from "./message.ts";
import { Type } from "./constants.ts";
import { skipName } from "./walk.ts";
import { labelText } from "./name.ts";

/** A message that does not parse. `offset` is where the problem was found. */
export class DecodeError extends Error {
  readonly code = "CDNS_ERR_DECODE";
  readonly offset: number;
  constructor(offset: number, message: string) {
    super(`malformed DNS message at offset ${offset}: ${message}`);
    this.name = "DecodeError";
    this.offset = offset;
  }
}

/** End offset of the name read last by readName (saves returning a pair). */
let nameEnd = 0;

/**
 * Decodes a whole message. Names keep the case they have on the wire. The OPT record becomes
 * `edns` (its extended rcode bits folded into `rcode`) and is not listed in `additional`; record
 * types without a shape in RData keep their rdata raw (RFC 3597). A TTL with the top bit set reads
 * as 0 (RFC 2181 8). Names are in the server's text form (name.ts: a "." inside a label is \.).
 * Throws DecodeError (CDNS_ERR_DECODE) on anything malformed, including an OPT outside the additional
 * section, a second OPT, and trailing octets.
 */
export function decode(input: Uint8Array): Msg {
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const len = buf.length;
  if (len < 12) throw new DecodeError(len, `message of ${len} octets is shorter than a header`);
  const counts = [
    (buf[4] << 8) | buf[5],
    (buf[6] << 8) | buf[7],
    (buf[8] << 8) | buf[9],
    (buf[10] << 8) | buf[11],
  ];
  const msg: Msg = {
    id: (buf[0] << 8) | buf[1],
    qr: (buf[2] & 0x80) !== 0,
    opcode: (buf[2] >> 3) & 0x0f,
    aa: (buf[2] & 0x04) !== 0,
    tc: (buf[2] & 0x02) !== 0,
    rd: (buf[2] & 0x01) !== 0,
    ra: (buf[3] & 0x80) !== 0,
    ad: (buf[3] & 0x20) !== 0,
    cd: (buf[3] & 0x10) !== 0,
    rcode: buf[3] & 0x0f,
    question: [],
    answer: [],
    authority: [],
    additional: [],
  };
  let p = 12;
  for (let i = 0; i < counts[0]; i++) {
    const name = readName(buf, p, len);
    p = nameEnd;
    if (p + 4 > len) throw new DecodeError(p, "question ends early");
    const q: Question = { name, type: (buf[p] << 8) | buf[p + 1], class: (buf[p + 2] << 8) | buf[p + 3] };
    msg.question.push(q);
    p += 4;
  }
  const sections = [msg.answer, msg.authority, msg.additional];
  for (let s = 0; s < 3; s++) {
    for (let i = 0; i < counts[s + 1]; i++) {
      const start = p;
      const name = readName(buf, p, len);
      p = nameEnd;
      if (p + 10 > len) throw new DecodeError(p, `record ${name} ends early`);
      const type = (buf[p] << 8) | buf[p + 1];
      const cls = (buf[p + 2] << 8) | buf[p + 3];
      const ttl = buf.readUInt32BE(p + 4);
      const end = p + 10 + ((buf[p + 8] << 8) | buf[p + 9]);
      if (end > len) throw new DecodeError(p + 8, `rdata of ${name} runs past the message`);
      p += 10;
      if (type === Type.OPT) {
        if (s !== 2) throw new DecodeError(start, "OPT record outside the additional section");
        if (msg.edns !== undefined) throw new DecodeError(start, "second OPT record");
        if (name !== ".") throw new DecodeError(start, "OPT record owner is not the root");
        msg.edns = readOpt(buf, cls, ttl, p, end);
        msg.rcode |= (ttl >>> 24) << 4;
      } else {
        const rr: RR = {
          name,
          type,
          class: cls,
          ttl: ttl > 0x7fffffff ? 0 : ttl,
          data: readRData(buf, type, p, end),
        };
        sections[s].push(rr);
      }
      p = end;
    }
  }
  if (p !== len) throw new DecodeError(p, `${len - p} octets after the last record`);
  return msg;
}

function readOpt(buf: Buffer, cls: number, ttl: number, from: number, end: number): Edns {
  const edns: Edns = { udpSize: cls, version: (ttl >>> 16) & 0xff, do: (ttl & 0x8000) !== 0, options: [] };
  for (let o = from; o < end;) {
    if (o + 4 > end) throw new DecodeError(o, "EDNS option header runs past the OPT rdata");
    const olen = (buf[o + 2] << 8) | buf[o + 3];
    if (o + 4 + olen > end) throw new DecodeError(o, "EDNS option runs past the OPT rdata");
    edns.options.push({ code: (buf[o] << 8) | buf[o + 1], data: copy(buf, o + 4, o + 4 + olen) });
    o += 4 + olen;
  }
  return edns;
}

function readRData(buf: Buffer, type: number, p: number, end: number): RData {
  const rdlen = end - p;
  switch (type) {
    case Type.A:
      if (rdlen !== 4) throw new DecodeError(p, `A rdata of ${rdlen} octets`);
      return { type, address: `${buf[p]}.${buf[p + 1]}.${buf[p + 2]}.${buf[p + 3]}` };
    case Type.AAAA:
      if (rdlen !== 16) throw new DecodeError(p, `AAAA rdata of ${rdlen} octets`);
      return { type, address: ipv6Text(buf, p) };
    case Type.NS:
    case Type.CNAME:
    case Type.PTR: {
      const target = readName(buf, p, end);
      exact(nameEnd, end);
      return { type, target };
    }
    case Type.MX: {
      if (rdlen < 3) throw new DecodeError(p, `MX rdata of ${rdlen} octets`);
      const exchange = readName(buf, p + 2, end);
      exact(nameEnd, end);
      return { type, preference: (buf[p] << 8) | buf[p + 1], exchange };
    }
    case Type.SOA: {
      const mname = readName(buf, p, end);
      const rname = readName(buf, nameEnd, end);
      const q = nameEnd;
      exact(q + 20, end);
      return {
        type,
        mname,
        rname,
        serial: buf.readUInt32BE(q),
        refresh: buf.readUInt32BE(q + 4),
        retry: buf.readUInt32BE(q + 8),
        expire: buf.readUInt32BE(q + 12),
        minimum: buf.readUInt32BE(q + 16),
      };
    }
    case Type.TXT: {
      const strings: string[] = [];
      for (let o = p; o < end;) {
        const n = buf[o];
        if (o + 1 + n > end) throw new DecodeError(o, "TXT string runs past the rdata");
        strings.push(buf.toString("latin1", o + 1, o + 1 + n));
        o += 1 + n;
      }
      return { type, strings };
    }
    case Type.SRV: {
      if (rdlen < 7) throw new DecodeError(p, `SRV rdata of ${rdlen} octets`);
      const target = readName(buf, p + 6, end);
      exact(nameEnd, end);
      return {
        type,
        priority: (buf[p] << 8) | buf[p + 1],
        weight: (buf[p + 2] << 8) | buf[p + 3],
        port: (buf[p + 4] << 8) | buf[p + 5],
        target,
      };
    }
    case Type.CAA: {
      if (rdlen < 2 || p + 2 + buf[p + 1] > end) throw new DecodeError(p, "CAA tag runs past the rdata");
      const tagEnd = p + 2 + buf[p + 1];
      return {
        type,
        flags: buf[p],
        tag: buf.toString("latin1", p + 2, tagEnd),
        value: buf.toString("latin1", tagEnd, end),
      };
    }
  }
  return { type, raw: copy(buf, p, end) };
}

/**
 * The name at `off` as text ("a.example.", "." for the root), case kept, odd octets escaped (name.ts).
 * `limit` bounds the in-place part (the rdata's end inside a record). Sets nameEnd.
 */
function readName(buf: Buffer, off: number, limit: number): string {
  const end = skipName(buf, off, limit);
  if (end < 0) throw new DecodeError(off, "malformed name");
  // skipName checked every label and pointer, so this walk only follows them.
  let name = "";
  let p = off;
  for (let l = buf[p]; l !== 0; l = buf[p]) {
    if (l >= 0xc0) {
      p = ((l & 0x3f) << 8) | buf[p + 1];
      continue;
    }
    name += labelText(buf.toString("latin1", p + 1, p + 1 + l)) + ".";
    p += l + 1;
  }
  nameEnd = end;
  return name === "" ? "." : name;
}

/** The name at `off` of a whole message, as text (readName): for a caller that reads one name off the
 * octets without decoding the message. Throws a DecodeError when it is malformed. */
export function nameAt(buf: Buffer, off: number): string {
  return readName(buf, off, buf.length);
}

function exact(at: number, end: number): void {
  if (at !== end) throw new DecodeError(at, `rdata length disagrees with its content by ${end - at} octets`);
}

function copy(buf: Buffer, from: number, to: number): Uint8Array {
  return new Uint8Array(buf.subarray(from, to));
}

/** RFC 5952 text: lowercase, no leading zeros, the longest run (2+) of zero groups as "::". */
function ipv6Text(buf: Buffer, p: number): string {
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (buf[p + 2 * i] !== 0 || buf[p + 2 * i + 1] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && buf[p + 2 * j] === 0 && buf[p + 2 * j + 1] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  let s = "";
  for (let i = 0; i < 8; i++) {
    if (i === bestAt) {
      s += "::";
      i += bestLen - 1;
      continue;
    }
    if (s !== "" && !s.endsWith(":")) s += ":";
    s += ((buf[p + 2 * i] << 8) | buf[p + 2 * i + 1]).toString(16);
  }
  return s;
}
