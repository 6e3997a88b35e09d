// Fitting an encoded reply to what the client can take (RFC 1035 4.2.1, RFC 6891 6.2.5), by the rules
// of RFC 2181 section 9: the TC bit says that something the client asked for is missing, never that
// optional extras were left out. Works on the wire bytes, so a reply replayed from the answer cache is
// fitted without decoding it or running the plugin chain again.
//
// What it relies on, as encode.ts writes it: one question, compression pointers that only point
// backwards, and the OPT record (if any) last. Dropping a tail of records then leaves every pointer
// of the records kept valid, and the OPT record (owner the root, no names inside) can move.

import { skipName } from "./walk.ts";
import { nameAt } from "./decode.ts";
import { canonical, isSubdomain } from "./name.ts";
import { PLAIN_UDP_SIZE, Type } from "./constants.ts";

/** A reply that is not what encode.ts writes: a bug in whoever built it, never the client's fault. */
export class FitError extends Error {
  readonly code = "CDNS_ERR_FIT";
  constructor(message: string) {
    super(message);
    this.name = "FitError";
  }
}

const MAX_MESSAGE = 65535;

/**
 * `full` made to fit `maxSize` octets (taken as 512 when below: every client takes that). Returns
 * `full` itself when it fits, else a new Buffer holding, in this order of preference:
 *  1. the answer and authority sections whole, and as many whole RRsets of the additional section as
 *     fit, in order (TC as in `full`: RFC 2181 9, missing additional data is no truncation; but a
 *     referral that leaves out in-domain glue, addresses at or below the cut, has TC: RFC 9471 3);
 *  2. for a positive answer (answer not empty, no SOA in the authority), the answer alone: its NS
 *     records are as optional as the additional section (TC as in `full`);
 *  3. otherwise the required part cut short, TC=1: the answer (and, for a negative answer or a
 *     referral, the authority after it) as long as whole RRsets fit, then as many records of the
 *     RRset that does not fit whole as do, so a client that never retries over TCP still gets a
 *     usable partial answer. A signed RRset (one followed by its RRSIGs) is never cut: a partial one
 *     could not be validated, and a signature is never kept without all of its RRset.
 * The OPT record is always kept, last; when header, question and OPT alone exceed the size, the OPT
 * loses its options. An RRset here is a run of adjacent records of one owner, class and type, with
 * the RRSIGs covering that type that follow it. `questionEnd` is the offset just past the question.
 * Throws FitError (CDNS_ERR_FIT) for bytes that do not parse as such a reply.
 */
export function fitReply(full: Buffer, questionEnd: number, maxSize: number): Buffer {
  const limit = maxSize >= MAX_MESSAGE ? MAX_MESSAGE : Math.max(PLAIN_UDP_SIZE, Math.floor(maxSize));
  if (full.length <= limit) return full;
  const l = layout(full, questionEnd);
  const { an, ns, opt } = l;

  // The OPT record, whole if header, question and OPT fit, else without its options.
  let meta = opt < 0 ? full.subarray(0, 0) : full.subarray(opt);
  if (opt >= 0 && questionEnd + meta.length > limit) {
    meta = Buffer.concat([full.subarray(opt, opt + 9), Buffer.from([0, 0])]);
  }
  const fits = (n: number) => (n === 0 ? questionEnd : l.ends[n - 1]) + meta.length <= limit;

  let kept: number;
  let truncated = (full[2] & 0x02) !== 0;
  if (fits(an + ns)) {
    kept = withAdditional(l, fits);
    // RFC 9471 3: a referral whose in-domain glue (addresses below the cut) is not all there has TC.
    if (kept < l.records && l.referral && inDomainGlueLeft(full, l, kept)) truncated = true;
  } else if (an > 0 && !l.soaInAuthority && fits(an)) kept = an;
  else {
    truncated = true;
    kept = requiredPart(l, fits);
  }

  const body = kept === 0 ? questionEnd : l.ends[kept - 1];
  const out = Buffer.allocUnsafe(body + meta.length);
  full.copy(out, 0, 0, body);
  out.set(meta, body);
  const keptAn = Math.min(kept, an);
  const keptNs = Math.min(Math.max(kept - an, 0), ns);
  const keptAr = Math.max(kept - an - ns, 0) + (opt < 0 ? 0 : 1);
  out[2] = truncated ? out[2] | 0x02 : out[2] & ~0x02;
  out.writeUInt16BE(keptAn, 6);
  out.writeUInt16BE(keptNs, 8);
  out.writeUInt16BE(keptAr, 10);
  return out;
}

/** Where a reply's records end and how they group into RRsets. */
interface Layout {
  an: number;
  ns: number;
  /** Records other than the OPT record. */
  records: number;
  /** Every record's end. */
  ends: Int32Array;
  /** 1 on the first record of each RRset. */
  setStart: Uint8Array;
  /** 1 on the first record of an RRset that has RRSIGs. */
  signed: Uint8Array;
  soaInAuthority: boolean;
  /** No answer and NS records in the authority section: a referral. */
  referral: boolean;
  /** Every record's start. */
  starts: Int32Array;
  /** The OPT record's offset, -1 without one. */
  opt: number;
}

/** Walks the records after the question (at `questionEnd`); throws FitError where they do not parse. */
function layout(full: Buffer, questionEnd: number): Layout {
  const an = (full[6] << 8) | full[7];
  const ns = (full[8] << 8) | full[9];
  const total = an + ns + ((full[10] << 8) | full[11]);
  const l: Layout = {
    an,
    ns,
    records: total,
    ends: new Int32Array(total),
    setStart: new Uint8Array(total),
    signed: new Uint8Array(total),
    soaInAuthority: false,
    referral: false,
    starts: new Int32Array(total),
    opt: -1,
  };
  let first = 0;
  let prevOwner = -1; // the previous record's owner, class and covered type
  let prevClass = -1;
  let prevCovered = -1;
  let p = questionEnd;
  for (let i = 0; i < total; i++) {
    const start = p;
    p = skipName(full, p, full.length);
    if (p < 0 || p + 10 > full.length) throw new FitError(`record ${i} at offset ${start} does not parse`);
    const type = (full[p] << 8) | full[p + 1];
    const end = p + 10 + ((full[p + 8] << 8) | full[p + 9]);
    if (end > full.length) throw new FitError(`record ${i} at offset ${start} runs past the message`);
    l.ends[i] = end;
    l.starts[i] = start;
    if (type === Type.OPT && i === total - 1 && i >= an + ns) {
      l.opt = start;
      l.records = total - 1;
      p = end;
      break;
    }
    if (type === Type.SOA && i >= an && i < an + ns) l.soaInAuthority = true;
    if (i === an && an === 0 && type === Type.NS) l.referral = true;
    const cls = (full[p + 2] << 8) | full[p + 3];
    const covered = type === Type.RRSIG && end - p >= 12 ? (full[p + 10] << 8) | full[p + 11] : type;
    if (
      i === 0 ||
      i === an ||
      i === an + ns ||
      cls !== prevClass ||
      covered !== prevCovered ||
      !sameName(full, start, prevOwner)
    ) {
      l.setStart[i] = 1;
      first = i;
    }
    if (type === Type.RRSIG) l.signed[first] = 1;
    prevOwner = start;
    prevClass = cls;
    prevCovered = covered;
    p = end;
  }
  if (p !== full.length) throw new FitError(`${full.length - p} octets after the last record`);
  return l;
}

/** How many records to keep: the answer and authority sections, then whole RRsets of the additional
 * section, in order, while they fit. */
function withAdditional(l: Layout, fits: (records: number) => boolean): number {
  let kept = l.an + l.ns;
  for (let i = kept; i < l.records; i++) {
    let j = i + 1;
    while (j < l.records && l.setStart[j] === 0) j++;
    if (!fits(j)) break;
    kept = j;
    i = j - 1;
  }
  return kept;
}

/** True when a record of the additional section past `kept` is owned by the cut's name or one below it. */
function inDomainGlueLeft(full: Buffer, l: Layout, kept: number): boolean {
  const cut = canonical(nameAt(full, l.starts[l.an]));
  for (let i = kept; i < l.records; i++)
    if (isSubdomain(canonical(nameAt(full, l.starts[i])), cut)) return true;
  return false;
}

/** How many records of the required part fit: whole RRsets, then as many records of the first RRset
 * that does not fit whole as fit, unless it is signed. */
function requiredPart(l: Layout, fits: (records: number) => boolean): number {
  const required = l.an === 0 || l.soaInAuthority ? l.an + l.ns : l.an;
  let kept = 0;
  for (let i = 0; i < required;) {
    let j = i + 1;
    while (j < required && l.setStart[j] === 0) j++;
    if (fits(j)) {
      kept = j;
      i = j;
      continue;
    }
    if (l.signed[i] === 0) while (kept + 1 < j && fits(kept + 1)) kept++;
    break;
  }
  return kept;
}

/** True when the names at `a` and `b` are equal, ASCII case aside (RFC 4343). Both were checked by
 * skipName, so following their pointers ends. Allocates nothing: this runs once per record. */
function sameName(buf: Buffer, a: number, b: number): boolean {
  for (;;) {
    let la = buf[a];
    while (la >= 0xc0) {
      a = ((la & 0x3f) << 8) | buf[a + 1];
      la = buf[a];
    }
    let lb = buf[b];
    while (lb >= 0xc0) {
      b = ((lb & 0x3f) << 8) | buf[b + 1];
      lb = buf[b];
    }
    if (a === b) return true; // the same octets from here on
    if (la !== lb) return false;
    if (la === 0) return true;
    for (let i = 1; i <= la; i++) {
      const x = buf[a + i];
      const y = buf[b + i];
      if (x !== y && ((x | 0x20) !== (y | 0x20) || (x | 0x20) < 0x61 || (x | 0x20) > 0x7a)) return false;
    }
    a += la + 1;
    b += lb + 1;
  }
}
