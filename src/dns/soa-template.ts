// A negative answer's SOA record, copied instead of encoded (encode.ts). NXDOMAIN and NODATA, with the
// zone's SOA alone in the authority section, are most of what a cluster's DNS computes once its cache
// misses: every search-list miss, every random subdomain. Written right after a question that ends in
// the zone, the record compresses the same way every time: its owner and the tails of MNAME and RNAME
// point to where the zone starts in the question, and nothing else in it points anywhere. That holds
// unless the question's label right above the zone is the one MNAME or RNAME has there (they would
// then point further up the question). So the first such record written is kept as octets with the
// places of its pointers, and the next ones are those octets with the pointers set: a fifth of the
// encoding's time for these replies, where the generic writer hashes every suffix of the question.

import type { RR } from "./message.ts";
import { Type } from "./constants.ts";
import { nameToWire } from "./name.ts";

type SoaData = Extract<RR["data"], { type: 6 }>;

/** The SOA record whose octets are kept, and how to set them behind a question. */
export class SoaTemplate {
  readonly #name: string;
  readonly #class: number;
  readonly #ttl: number;
  readonly #data: SoaData;
  /** The zone (the owner) as lowercased wire octets. */
  readonly #zone: Uint8Array;
  /** The labels MNAME and RNAME have right above the zone, lowercased, as length-prefixed octets. */
  readonly #above: Uint8Array[];
  readonly #octets: Uint8Array;
  /** Where in #octets a pointer to the zone sits. */
  readonly #pointers: number[];

  private constructor(rr: RR, zone: Uint8Array, above: Uint8Array[], octets: Uint8Array, pointers: number[]) {
    this.#name = rr.name;
    this.#class = rr.class;
    this.#ttl = rr.ttl;
    this.#data = { ...(rr.data as SoaData) };
    this.#zone = zone;
    this.#above = above;
    this.#octets = octets;
    this.#pointers = pointers;
  }

  /**
   * The template of `rr` as the encoder just wrote it at buf[start..end), right behind a question
   * whose name (lowercased) is buf[12..12+length); undefined when it cannot be one: the question is not
   * in the zone, or the record points anywhere but at the zone there.
   */
  static learn(rr: RR, buf: Uint8Array, length: number, start: number, end: number): SoaTemplate | undefined {
    const zone = zoneOf(rr);
    if (zone === undefined) return undefined;
    const above = aboveOf(rr, zone);
    const at = zoneStart(zone, above, buf, 12, length);
    if (at < 0) return undefined;
    const pointers: number[] = [];
    // Owner; type, class, TTL and RDLENGTH; MNAME; RNAME; five 32-bit numbers.
    let p = pointersOf(buf, start, end, pointers);
    if (p < 0 || p + 10 > end) return undefined;
    p = pointersOf(buf, p + 10, end, pointers);
    if (p < 0) return undefined;
    p = pointersOf(buf, p, end, pointers);
    if (p < 0 || p + 20 !== end) return undefined;
    for (const ptr of pointers) {
      if ((((buf[ptr] & 0x3f) << 8) | buf[ptr + 1]) !== 12 + at) return undefined;
    }
    // A copy: buf is the encoder's scratch (and a Buffer's slice() would be a view of it).
    const octets = Uint8Array.prototype.slice.call(buf, start, end);
    return new SoaTemplate(
      rr,
      zone,
      above,
      octets,
      pointers.map((ptr) => ptr - start),
    );
  }

  /** Whether the template writes exactly `rr`. */
  matches(rr: RR): boolean {
    const d = rr.data as SoaData;
    const t = this.#data;
    return (
      rr.name === this.#name &&
      rr.type === Type.SOA &&
      rr.class === this.#class &&
      rr.ttl === this.#ttl &&
      d.mname === t.mname &&
      d.rname === t.rname &&
      d.serial === t.serial &&
      d.refresh === t.refresh &&
      d.retry === t.retry &&
      d.expire === t.expire &&
      d.minimum === t.minimum
    );
  }

  /** Octets the record takes. */
  get length(): number {
    return this.#octets.length;
  }

  /**
   * Where the zone starts in the lowercased wire name name[from..from+length) (a query's key), or -1
   * when the name is not in the zone, or its label above the zone is one MNAME or RNAME has there.
   */
  zoneAt(name: Uint8Array, from: number, length: number): number {
    return zoneStart(this.#zone, this.#above, name, from, length);
  }

  /** Writes the record at out[at..], its pointers to `zone` (an offset in out); returns where it ends. */
  writeAt(out: Uint8Array, at: number, zone: number): number {
    const o = this.#octets;
    for (let i = 0; i < o.length; i++) out[at + i] = o[i];
    const hi = 0xc0 | (zone >> 8);
    const lo = zone & 0xff;
    for (const p of this.#pointers) {
      out[at + p] = hi;
      out[at + p + 1] = lo;
    }
    return at + o.length;
  }
}

/** Reads the name at buf[p..]: labels, then the root or a pointer, whose place goes to `pointers`.
 * Where the name ends, or -1 past `end`. */
function pointersOf(buf: Uint8Array, p: number, end: number, pointers: number[]): number {
  while (p < end) {
    const l = buf[p];
    if (l === 0) return p + 1;
    if (l >= 0xc0) {
      pointers.push(p);
      return p + 2 <= end ? p + 2 : -1;
    }
    p += l + 1;
  }
  return -1;
}

/** Where `zone` starts in the wire name name[from..from+length), or -1 when the name is not in it or
 * its label above the zone is one of `above`. */
function zoneStart(
  zone: Uint8Array,
  above: readonly Uint8Array[],
  name: Uint8Array,
  from: number,
  length: number,
): number {
  const at = length - zone.length;
  if (at < 0) return -1;
  for (let i = 0; i < zone.length; i++) if (name[from + at + i] !== zone[i]) return -1;
  let label = -1;
  let p = 0;
  while (p < at) {
    label = p;
    p += name[from + p] + 1;
  }
  if (p !== at) return -1;
  if (label >= 0) for (const a of above) if (sameOctets(a, name, from + label)) return -1;
  return at;
}

function zoneOf(rr: RR): Uint8Array | undefined {
  const wire = nameToWire(rr.name);
  return typeof wire === "string" ? undefined : lower(wire);
}

/** MNAME's and RNAME's labels right above the zone, lowercased and length-prefixed. */
function aboveOf(rr: RR, zone: Uint8Array): Uint8Array[] {
  const d = rr.data as SoaData;
  const out: Uint8Array[] = [];
  for (const name of [d.mname, d.rname]) {
    const w = nameToWire(name);
    if (typeof w === "string") continue;
    const wire = lower(w);
    const at = wire.length - zone.length;
    if (at <= 0 || !sameOctets(zone, wire, at)) continue;
    let label = 0;
    for (let p = 0; p < at; p += wire[p] + 1) label = p;
    out.push(wire.subarray(label, label + wire[label] + 1));
  }
  return out;
}

/** Whether `a` (a whole label or name) sits at b[at..]. */
function sameOctets(a: Uint8Array, b: Uint8Array, at: number): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[at + i]) return false;
  return true;
}

function lower(wire: Uint8Array): Uint8Array {
  const out = Uint8Array.from(wire);
  for (let i = 0; i < out.length; i++) if (out[i] >= 0x41 && out[i] <= 0x5a) out[i] |= 0x20;
  return out;
}
