// Walks over a message's names and records without decoding them: the bounds every name and record
// must keep (skipName), the shapes of TSIG and OPT rdata, and the search for the OPT record of a packet
// the scan refused, for its error reply (RFC 6891 7).

import { Type } from "./constants.ts";

/** Most compression pointers one name may follow. A legal name has at most 127 labels. */
const MAX_JUMPS = 127;

/**
 * The OPT record of a refused packet: `at`, the offset of the TYPE field of the first record of type
 * OPT a walk of the message reaches (-1: none; a name or record before it that runs past the message
 * hides it, while a name that is only malformed does not, as its extent is known), and `wellFormed`:
 * every name is valid (compression pointers strictly backwards, in the question too), the message
 * ends with its last record, a TSIG record is the last one and whole, and the OPT record is the only
 * one, in the additional section, owned by the root, with options that fill its rdata. The message is
 * buf[0..len] (the batched engine's receive slots are larger than their packets).
 */
export function optRecord(buf: Buffer, len: number): { at: number; wellFormed: boolean } {
  let at = -1;
  let good = true;
  let p = 12;
  const past = (name: number, fixed: number): number => {
    const end = skipName(buf, name, len, len);
    if (end < 0) good = false;
    const q = end >= 0 ? end : nameExtent(buf, name, len);
    return q < 0 || q + fixed > len ? -1 : q;
  };
  for (let i = (buf[4] << 8) | buf[5]; i > 0; i--) {
    p = past(p, 4);
    if (p < 0) return { at, wellFormed: false };
    p += 4;
  }
  const additionalFrom = ((buf[6] << 8) | buf[7]) + ((buf[8] << 8) | buf[9]);
  const records = additionalFrom + ((buf[10] << 8) | buf[11]);
  for (let i = 0; i < records; i++) {
    const start = p;
    p = past(p, 10);
    if (p < 0) return { at, wellFormed: false };
    const type = (buf[p] << 8) | buf[p + 1];
    const end = p + 10 + ((buf[p + 8] << 8) | buf[p + 9]);
    if (type === Type.OPT) {
      if (at >= 0) good = false;
      else at = p;
    }
    if (end > len) return { at, wellFormed: false };
    if (
      metaRecordMisplaced(type, i, records, additionalFrom) ||
      metaRecordMalformed(buf, start, p, end, len)
    ) {
      good = false;
    }
    p = end;
  }
  return { at, wellFormed: good && at >= 0 && p === len };
}

/** Offset just past the name at `off` as it lies in the message, its labels up to the root or a
 * pointer (wherever that points), or -1 when it runs past `limit` or uses a reserved label type. */
function nameExtent(buf: Buffer, off: number, limit: number): number {
  for (let p = off; p < limit;) {
    const l = buf[p];
    if (l === 0) return p + 1;
    if (l >= 0xc0) return p + 2 <= limit ? p + 2 : -1;
    if (l > 63) return -1;
    p += l + 1;
  }
  return -1;
}

/**
 * True when an OPT or TSIG record of `type`, the i-th of `records` (the additional section from
 * `additionalFrom`), is out of place: a TSIG record must be the last one, in the additional section
 * (RFC 8945 5.1); an OPT record in the additional section (RFC 6891 6.1.1). Whether there is more
 * than one OPT record is the caller's to count.
 */
export function metaRecordMisplaced(
  type: number,
  i: number,
  records: number,
  additionalFrom: number,
): boolean {
  if (type === Type.TSIG) return i < additionalFrom || i !== records - 1;
  return type === Type.OPT && i < additionalFrom;
}

/**
 * True when the record whose owner name starts at `start`, with its TYPE field at `p` and its rdata
 * ending at `end` (inside the message, which ends at msgEnd), is a malformed OPT or TSIG record: a
 * TSIG record's rdata must be whole (RFC 8945 4.2); an OPT record is owned by the root, with options
 * that fill its rdata (RFC 6891 6.1.2).
 */
export function metaRecordMalformed(
  buf: Buffer,
  start: number,
  p: number,
  end: number,
  msgEnd: number,
): boolean {
  const type = (buf[p] << 8) | buf[p + 1];
  if (type === Type.TSIG) return !tsigFits(buf, p + 10, end, msgEnd);
  if (type === Type.OPT) return p !== start + 1 || buf[start] !== 0 || !optionsFit(buf, p + 10, end);
  return false;
}

/** True when a TSIG rdata (RFC 8945 4.2) exactly fills from..end: algorithm name, time signed (48
 * bits), fudge, MAC size and MAC, original ID, error, other length and other data. */
function tsigFits(buf: Buffer, from: number, end: number, msgEnd: number): boolean {
  let p = skipName(buf, from, end, msgEnd);
  if (p < 0 || p + 10 > end) return false;
  p += 10 + ((buf[p + 8] << 8) | buf[p + 9]);
  if (p + 6 > end) return false;
  return p + 6 + ((buf[p + 4] << 8) | buf[p + 5]) === end;
}

/** True when EDNS options (code, length, data)* exactly fill from..end. */
function optionsFit(buf: Buffer, from: number, end: number): boolean {
  let o = from;
  while (o < end) {
    if (o + 4 > end) return false;
    o += 4 + ((buf[o + 2] << 8) | buf[o + 3]);
  }
  return o === end;
}

/**
 * Offset just past the name at `off` (its in-place part: labels up to the terminator or the first
 * pointer), or -1 when it is malformed: it runs past `limit`, a label type is reserved (0x40, 0x80),
 * the name is longer than 255 octets, or a compression pointer does not point strictly before every
 * octet read so far for this name (so pointers can neither go forward nor loop).
 */
export function skipName(buf: Uint8Array, off: number, limit: number, msgEnd = buf.length): number {
  let p = off;
  let lowest = off; // every pointer must land before this
  let end = -1; // where the name ends in place, once a pointer was followed
  let wire = 0;
  let jumps = 0;
  for (;;) {
    // A pointer may lead past `limit` (RDATA's end) but never past the message.
    if (p >= (end < 0 ? limit : msgEnd)) return -1;
    const l = buf[p];
    if (l === 0) return end < 0 ? p + 1 : end;
    if (l < 64) {
      wire += l + 1;
      if (wire + 1 > 255) return -1;
      p += l + 1;
      continue;
    }
    if (l < 0xc0 || p + 1 >= (end < 0 ? limit : msgEnd)) return -1;
    const target = ((l & 0x3f) << 8) | buf[p + 1];
    if (target >= lowest || ++jumps > MAX_JUMPS) return -1;
    if (end < 0) end = p + 2;
    lowest = target;
    p = target;
  }
}
