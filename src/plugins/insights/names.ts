// Top lists of DNS names, kept as the lowercased wire octets the query scan already made (the
// answer store's key starts with them), so counting a name copies octets and builds no string.
// A tag (a workload's row) may go with the name: "this name, from this workload".

import { SpaceSaving, hashBytes, hashText } from "./space-saving.ts";

/** The longest name kept; a longer one is counted under its first MAX_NAME octets' hash. */
export const MAX_NAME = 255;

/** The wire name at wire[0..] up to its root label: its length in octets without the root, or -1. */
export function wireNameLength(wire: Uint8Array): number {
  let i = 0;
  while (i < wire.length && wire[i] !== 0) i += wire[i] + 1;
  return i < wire.length ? i : -1;
}

/** The text form of wire[from..to) (labels without the root): "api.github.com". */
export function wireText(wire: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to;) {
    const n = wire[i];
    if (s !== "") s += ".";
    for (let k = i + 1; k <= i + n; k++) {
      const c = wire[k];
      // Only what a hostname may hold is shown as is; anything else escaped as \DDD (RFC 4343).
      s +=
        (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f
          ? String.fromCharCode(c)
          : `\\${String(c).padStart(3, "0")}`;
    }
    i += n + 1;
  }
  return s === "" ? "." : s;
}

/** The hash a NameTop counts a name by. */
export function nameHash(wire: Uint8Array, from: number, length: number, tag = 0): number {
  return hashBytes(wire, from, from + (length > MAX_NAME ? MAX_NAME : length), (0x811c9dc5 ^ tag) | 0);
}

export interface NameKey {
  name: string;
  tag: number;
}

/** A name sketch's entries as they cross between threads: name i is octets[at..at+lengths[i]), where
 * `at` sums the lengths before it. */
export interface NameEntries {
  octets: Uint8Array;
  lengths: Uint8Array;
  tags: Int32Array;
  counts: Float64Array;
  errors: Float64Array;
}

export class NameTop extends SpaceSaving<NameKey> {
  readonly #octets: Uint8Array;
  readonly #lengths: Uint8Array;
  readonly #tags: Int32Array;
  #wire: Uint8Array = new Uint8Array(0);
  #from = 0;
  #length = 0;
  #tag = 0;

  constructor(capacity: number, doorkeeper = true) {
    super(capacity, doorkeeper);
    this.#octets = new Uint8Array(capacity * MAX_NAME);
    this.#lengths = new Uint8Array(capacity);
    this.#tags = new Int32Array(capacity);
  }

  /** Counts the name wire[from..from+length) (labels, no root) with `tag`, `weight` times. */
  count(wire: Uint8Array, from: number, length: number, tag = 0, weight = 1): void {
    this.#put(wire, from, length, tag);
    this.countKey(nameHash(wire, from, length, tag), weight);
  }

  /** Counts the name `weight` times, untagged, by the hash the caller has (nameHash: a name in two
   * lists). */
  countHashed(hash: number, wire: Uint8Array, from: number, length: number, weight: number): void {
    this.#put(wire, from, length, 0);
    this.countKey(hash, weight);
  }

  /** The key the next countKey counts. */
  #put(wire: Uint8Array, from: number, length: number, tag: number): void {
    this.#wire = wire;
    this.#from = from;
    this.#length = length > MAX_NAME ? MAX_NAME : length;
    this.#tag = tag;
  }

  /** Its entries, copied (a worker posts them, then clears the sketch). */
  entries(): NameEntries {
    const n = this.used;
    let size = 0;
    for (let s = 0; s < n; s++) size += this.#lengths[s];
    const octets = new Uint8Array(size);
    for (let s = 0, at = 0; s < n; at += this.#lengths[s++]) {
      octets.set(this.#octets.subarray(s * MAX_NAME, s * MAX_NAME + this.#lengths[s]), at);
    }
    const lengths = this.#lengths.slice(0, n);
    return { octets, lengths, tags: this.#tags.slice(0, n), ...this.exportCounts() };
  }

  /** Adds another sketch's entries (a worker's) to this one, each with its count and error. */
  merge(e: NameEntries): void {
    for (let i = 0, at = 0; i < e.lengths.length; at += e.lengths[i++]) {
      const length = e.lengths[i];
      this.#wire = e.octets;
      this.#from = at;
      this.#length = length;
      this.#tag = e.tags[i];
      this.countKey(
        hashBytes(e.octets, at, at + length, (0x811c9dc5 ^ e.tags[i]) | 0),
        e.counts[i],
        e.errors[i],
      );
    }
  }

  protected holds(slot: number): boolean {
    if (this.#lengths[slot] !== this.#length || this.#tags[slot] !== this.#tag) return false;
    const o = this.#octets;
    const base = slot * MAX_NAME;
    const w = this.#wire;
    for (let i = 0; i < this.#length; i++) if (o[base + i] !== w[this.#from + i]) return false;
    return true;
  }

  protected keep(slot: number): void {
    // A loop, not set(subarray()): a view would be an object per new key.
    const o = this.#octets;
    const base = slot * MAX_NAME;
    const w = this.#wire;
    for (let i = 0; i < this.#length; i++) o[base + i] = w[this.#from + i];
    this.#lengths[slot] = this.#length;
    this.#tags[slot] = this.#tag;
  }

  protected keyAt(slot: number): NameKey {
    const base = slot * MAX_NAME;
    return { name: wireText(this.#octets, base, base + this.#lengths[slot]), tag: this.#tags[slot] };
  }

  override get bytes(): number {
    return super.bytes + this.#octets.byteLength + this.#lengths.byteLength + this.#tags.byteLength;
  }
}

export interface TextEntries {
  keys: string[];
  counts: Float64Array;
  errors: Float64Array;
}

/** A top list of texts the caller already holds (client addresses): kept by reference. */
export class TextTop extends SpaceSaving<string> {
  readonly #keys: string[];
  #key = "";

  constructor(capacity: number, doorkeeper = true) {
    super(capacity, doorkeeper);
    this.#keys = new Array<string>(capacity).fill("");
  }

  count(key: string, hash: number, weight = 1): void {
    this.#key = key;
    this.countKey(hash, weight);
  }

  /** Its entries, copied (a worker posts them, then clears the sketch). */
  entries(): TextEntries {
    return { keys: this.#keys.slice(0, this.used), ...this.exportCounts() };
  }

  /** Adds another sketch's entries (a worker's) to this one. */
  merge(e: TextEntries): void {
    for (let i = 0; i < e.keys.length; i++) {
      this.#key = e.keys[i];
      this.countKey(hashText(e.keys[i]), e.counts[i], e.errors[i]);
    }
  }

  protected holds(slot: number): boolean {
    return this.#keys[slot] === this.#key;
  }

  protected keep(slot: number): void {
    this.#keys[slot] = this.#key;
  }

  protected keyAt(slot: number): string {
    return this.#keys[slot];
  }
}
