// A message read off the wire whose records stay octets until someone reads them: how a forwarded
// reply travels up the chain. Decoding 4,000 records into objects and encoding them again cost the
// server about 5 of the 10 ms a 64 KB forwarded reply took (bench/big-forward.ts, 2026-11-28); a
// reply no plugin looks into is written out as the octets it came in (encode.ts), and the answer store
// and `cache` read what they need off them (answers/wire-facts.ts, wire-ttl.ts).
//
// The header, the question and the OPT record are decoded at once (plugins set flags and EDNS
// options); the sections decode on first access of answer, authority or additional, after which the
// message is an ordinary Msg and is encoded from its records. The walk that reads it checks what a
// replay of its octets relies on: every owner name and every name inside the rdata of the types that
// hold one is well formed and inside its record, A and AAAA have their size, the counts match, the
// message ends with its last record, and an OPT record, if any, is the last one.

import type { Edns, Msg, Question, RR } from "./message.ts";
import { Type } from "./constants.ts";
import { DecodeError, decode } from "./decode.ts";
import { skipName } from "./walk.ts";

/** Where a WireMsg's records lie: wire[questionEnd..end), `counts` records per section (OPT aside). */
export interface WireRecords {
  readonly wire: Buffer;
  readonly questionEnd: number;
  readonly end: number;
  readonly counts: readonly [number, number, number];
}

const SECTIONS = ["answer", "authority", "additional"] as const;

interface Sections {
  answer: RR[];
  authority: RR[];
  additional: RR[];
}

export class WireMsg implements Msg {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  ad: boolean;
  cd: boolean;
  rcode: number;
  question: Question[];
  edns?: Edns;
  // Own enumerable accessors (set in the constructor), so that a copy made with a spread decodes them
  // rather than leaving them out.
  answer!: RR[];
  authority!: RR[];
  additional!: RR[];
  #records: WireRecords | undefined;
  #sections: Sections | undefined;

  constructor(head: Msg, records: WireRecords) {
    this.id = head.id;
    this.qr = head.qr;
    this.opcode = head.opcode;
    this.aa = head.aa;
    this.tc = head.tc;
    this.rd = head.rd;
    this.ra = head.ra;
    this.ad = head.ad;
    this.cd = head.cd;
    this.rcode = head.rcode;
    this.question = head.question;
    this.edns = head.edns;
    this.#records = records;
    for (const name of SECTIONS) {
      Object.defineProperty(this, name, {
        enumerable: true,
        get: () => this.#decoded()[name],
        set: (rrs: RR[]) => (this.#decoded()[name] = rrs),
      });
    }
  }

  /** The records as octets while nobody has read them as objects; undefined after. The octets are this
   * message's own: a reader may rewrite TTLs or reorder records in place. */
  get records(): WireRecords | undefined {
    return this.#records;
  }

  #decoded(): Sections {
    if (this.#sections === undefined) {
      const m = decode(this.#records!.wire);
      this.#sections = { answer: m.answer, authority: m.authority, additional: m.additional };
      this.#records = undefined;
    }
    return this.#sections;
  }
}

/** Types whose rdata holds a name (after `skip` octets), which a client follows compression pointers in. */
const NAME_AT: ReadonlyMap<number, number> = new Map([
  [Type.NS, 0],
  [Type.CNAME, 0],
  [Type.PTR, 0],
  [39, 0], // DNAME
  [Type.MX, 2],
  [Type.SRV, 6],
  [Type.SOA, 0],
]);

/**
 * Reads `wire` (a whole message, which the WireMsg keeps) as a message whose records decode only when
 * read; a plain decode() when its shape does not allow that (an OPT record that is not the last one).
 * Throws DecodeError on anything malformed, as decode() does.
 */
export function readMessage(wire: Buffer): Msg {
  const len = wire.length;
  if (len < 12) throw new DecodeError(len, `message of ${len} octets is shorter than a header`);
  let p = 12;
  for (let i = (wire[4] << 8) | wire[5]; i > 0; i--) {
    p = skipName(wire, p, len);
    if (p < 0 || p + 4 > len) throw new DecodeError(12, "malformed question");
    p += 4;
  }
  const questionEnd = p;
  const counts: [number, number, number] = [
    (wire[6] << 8) | wire[7],
    (wire[8] << 8) | wire[9],
    (wire[10] << 8) | wire[11],
  ];
  const total = counts[0] + counts[1] + counts[2];
  let opt = -1;
  for (let i = 0; i < total; i++) {
    const start = p;
    p = skipName(wire, p, len);
    if (p < 0 || p + 10 > len) throw new DecodeError(start, "malformed record owner");
    const type = (wire[p] << 8) | wire[p + 1];
    const end = p + 10 + ((wire[p + 8] << 8) | wire[p + 9]);
    if (end > len) throw new DecodeError(p + 8, "rdata runs past the message");
    rdataFits(wire, type, p + 10, end);
    if (type === Type.OPT) {
      // Anywhere but last (or twice, or outside the additional section): decode says what is wrong.
      if (i !== total - 1 || i < counts[0] + counts[1]) return decode(wire);
      opt = start;
    }
    p = end;
  }
  if (p !== len) throw new DecodeError(p, `${len - p} octets after the last record`);
  // The header, the question and the OPT record, decoded as decode() reads them.
  const head = Buffer.allocUnsafe(questionEnd + (opt < 0 ? 0 : len - opt));
  wire.copy(head, 0, 0, questionEnd);
  if (opt >= 0) wire.copy(head, questionEnd, opt, len);
  head[6] = head[7] = head[8] = head[9] = head[10] = 0;
  head[11] = opt < 0 ? 0 : 1;
  if (opt >= 0) counts[2]--;
  return new WireMsg(decode(head), { wire, questionEnd, end: opt < 0 ? len : opt, counts });
}

/** Throws when the rdata of a type that holds a name does not hold a well-formed one inside it, or an
 * address record has the wrong size. */
function rdataFits(wire: Buffer, type: number, from: number, end: number): void {
  if ((type === Type.A && end - from !== 4) || (type === Type.AAAA && end - from !== 16)) {
    throw new DecodeError(from, `rdata of ${end - from} octets for type ${type}`);
  }
  const skip = NAME_AT.get(type);
  if (skip === undefined) return;
  let p = skipName(wire, from + skip, end);
  if (p >= 0 && type === Type.SOA) p = skipName(wire, p, end);
  if (p < 0 || (type === Type.SOA ? p + 20 : p) !== end)
    throw new DecodeError(from, "malformed name in rdata");
}

/** The records of `m` as octets, when it is a WireMsg nobody has read the records of. */
export function wireRecords(m: Msg): WireRecords | undefined {
  return m instanceof WireMsg ? m.records : undefined;
}
