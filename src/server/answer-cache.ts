// The fast path: encoded replies keyed by the query's lowercased question and EDNS state. A hit copies
// the stored bytes and patches the ID and the question, so no decode, plugin call or encode happens.
// A change in the data behind answers calls invalidate(), which drops every entry, or invalidateNames()
// when the plugin knows which owner names changed (a Service among 10k must not empty the cache). Either
// bumps the generation, so a reply computed across a change is not stored (it carries the generation it
// started under).

import { answerCacheStats } from "../metrics/server-stats.ts";

export interface CachedAnswer {
  /** The whole reply, encoded for the largest transport (TCP). */
  readonly bytes: Buffer;
  readonly generation: number;
  /** Date.now() past which the entry must not be used. */
  readonly expires: number;
  /** What the finish hooks report for a hit. */
  readonly rcode: number;
  readonly rflags: string;
  /** The plugin that produced the stored reply (metrics label it by that plugin on every hit). */
  readonly plugin: string;
  /** The server block that produced it: its finish hooks run on a hit. */
  readonly owner: unknown;
  /** Answer records to rotate on every replay (loadbalance), when the reply asked for it. */
  readonly rotation?: Rotation;
}

/** count records of size octets each, from offset at: the answer section of a reply whose records are
 * all one name (a compression pointer) and one address type. */
export interface Rotation {
  readonly at: number;
  readonly count: number;
  readonly size: number;
  /** How far the next replay rotates. */
  turn: number;
}

/** Where the answer records of an encoded reply are, if they are `count` records of one size: the
 * layout rotateInto needs; undefined for any other shape. */
export function rotationOf(reply: Buffer, questionEnd: number): Rotation | undefined {
  const count = (reply[6] << 8) | reply[7];
  if (count < 2) return undefined;
  let size = 0;
  for (let i = 0, p = questionEnd; i < count; i++) {
    // Owner a 2-octet pointer, then type, class, TTL, RDLENGTH and the RDATA.
    if (p + 12 > reply.length || (reply[p] & 0xc0) !== 0xc0) return undefined;
    const len = 12 + ((reply[p + 10] << 8) | reply[p + 11]);
    if (i === 0) size = len;
    else if (len !== size || reply[p] !== reply[questionEnd] || reply[p + 1] !== reply[questionEnd + 1])
      return undefined;
    p += len;
  }
  return { at: questionEnd, count, size, turn: 1 };
}

/** Copies the rotated answer records of `from` into `out` (already a copy of `from`). */
export function rotateInto(out: Buffer, from: Buffer, r: Rotation): void {
  const k = r.turn % r.count;
  r.turn = k + 1;
  const split = r.at + k * r.size;
  const end = r.at + r.count * r.size;
  out.set(from.subarray(split, end), r.at);
  out.set(from.subarray(r.at, split), r.at + (end - split));
}

export class AnswerCache {
  #entries = new Map<string, CachedAnswer>();
  /** Keys by their name part (the key without its 5 trailing type, class and EDNS octets). */
  #byName = new Map<string, string[]>();
  #generation = 0;
  readonly capacity: number;

  constructor(capacity = 100_000) {
    this.capacity = capacity;
  }

  get generation(): number {
    return this.#generation;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** A live entry for the key, or undefined. */
  get(key: string, now: number): CachedAnswer | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) {
      answerCacheStats.misses++;
      return undefined;
    }
    if (e.expires <= now) {
      this.#delete(key);
      answerCacheStats.misses++;
      return undefined;
    }
    answerCacheStats.hits++;
    return e;
  }

  /** Stores a reply computed under `generation`, unless the data changed meanwhile. */
  set(key: string, entry: CachedAnswer): void {
    if (entry.generation !== this.#generation) return;
    if (this.#entries.size >= this.capacity && !this.#entries.has(key)) {
      // Oldest first: a Map iterates in insertion order.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#delete(oldest);
    }
    if (!this.#entries.has(key)) {
      const name = key.slice(0, -5);
      const keys = this.#byName.get(name);
      if (keys === undefined) this.#byName.set(name, [key]);
      else keys.push(key);
    }
    this.#entries.set(key, entry);
  }

  invalidate(): void {
    this.#generation++;
    this.#entries.clear();
    this.#byName.clear();
  }

  /** Drops the entries for these canonical names ("a.example."), every type and EDNS state. */
  invalidateNames(names: Iterable<string>): void {
    this.#generation++;
    for (const name of names) {
      const keys = this.#byName.get(wireName(name));
      if (keys === undefined) continue;
      for (const k of keys) this.#entries.delete(k);
      this.#byName.delete(wireName(name));
    }
  }

  #delete(key: string): void {
    if (!this.#entries.delete(key)) return;
    const name = key.slice(0, -5);
    const keys = this.#byName.get(name);
    if (keys === undefined) return;
    const i = keys.indexOf(key);
    if (i >= 0) keys.splice(i, 1);
    if (keys.length === 0) this.#byName.delete(name);
  }

  /** Approximate bytes held, for metrics. */
  bytes(): number {
    let n = 0;
    for (const [k, e] of this.#entries) n += k.length + e.bytes.length + 64;
    return n;
  }
}

/** The key's name part for a canonical name: length-prefixed lowercase labels and the root octet. */
function wireName(name: string): string {
  let out = "";
  if (name !== ".") {
    for (const label of name.toLowerCase().slice(0, -1).split("."))
      out += String.fromCharCode(label.length) + label;
  }
  return out + "\0";
}
