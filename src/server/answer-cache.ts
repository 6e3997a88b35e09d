// The fast path: encoded replies keyed by the query's lowercased question and EDNS state. A hit copies
// the stored reply and patches the ID and the question, so no decode, plugin call or encode happens.
// Replies the `cache` plugin keeps live here too, as wire bytes: a hit writes the time left into every
// TTL field on the way out (src/dns/wire-ttl.ts), so `cache 30` costs a few stores per query and holds
// no decoded message.
// A change in the data behind answers calls invalidate(), which drops every entry, or invalidateNames()
// when the plugin knows which owner names changed (a Service among 10k must not empty the cache). Either
// bumps the generation, and a reply carries the generation it was computed under: it is not stored when
// its own name (or everything) changed meanwhile. A change of other names does not stop it, or an
// upstream answer would rarely be kept in a cluster whose endpoints change every few milliseconds.
//
// Memory: an entry holds its reply as a one-byte string (16 octets of header in V8's heap, where a
// Buffer costs about 280 octets of typed array, ArrayBuffer and backing store around the reply), what it
// shares with other replies of its block once (Meta), and its place in the list of its name's entries.

import type { CacheCounters, Kept, StoredAnswer } from "../plugin.ts";
import { wireKey } from "../dns/name.ts";
import { answerCacheStats } from "../metrics/server-stats.ts";

/** What replies of one block with the same rcode and answering plugin share. */
export interface Meta {
  /** What the finish hooks report for a hit. */
  readonly rcode: number;
  /** The plugin that produced the stored reply (metrics label it by that plugin on every hit). */
  readonly plugin: string;
  /** The server block that produced it: its finish hooks run on a hit. */
  readonly owner: unknown;
}

/** One stored reply. A class, so that every entry has one shape for the fast path's field reads. */
export class CachedAnswer implements StoredAnswer {
  /** The whole reply, encoded for the largest transport (TCP), one char per octet. */
  readonly wire: string;
  /** cacheClock() until which the fast path replays it. */
  readonly expires: number;
  /** cacheClock() at which the entry goes: `expires`, or later for a kept entry that may answer stale. */
  readonly dropAt: number;
  readonly meta: Meta;
  /** Answer records to rotate on every replay (loadbalance), when the reply asked for it. */
  readonly rotation: Rotation | undefined;
  /** `cache`'s decision when it keeps the reply: TTLs age from kept.stored. */
  readonly kept: Kept | undefined;
  /** `cache`'s counters when the query was in its zones (a hit counts there too). */
  readonly seenBy: CacheCounters | undefined;
  hits = 0;
  lastHit = 0;
  refreshing = false;
  /** The key it is stored under, once stored. */
  key = "";
  /** The next entry of the same owner name (every type and EDNS state), for invalidateNames. */
  sameName: CachedAnswer | undefined = undefined;
  /** The one before it: removing an entry (the oldest, at capacity) needs no walk of its name's list,
   * which a flood of one name with every QTYPE would otherwise make up to `capacity` long. */
  prevSameName: CachedAnswer | undefined = undefined;

  constructor(o: {
    bytes: Uint8Array;
    expires: number;
    dropAt?: number;
    meta: Meta;
    rotation?: Rotation;
    kept?: Kept;
    seenBy?: CacheCounters;
  }) {
    this.wire = Buffer.from(o.bytes.buffer, o.bytes.byteOffset, o.bytes.length).toString("latin1");
    this.expires = o.expires;
    this.dropAt = Math.max(o.expires, o.dropAt ?? 0);
    this.meta = o.meta;
    this.rotation = o.rotation;
    this.kept = o.kept;
    this.seenBy = o.seenBy;
    this.lastHit = o.kept?.stored ?? 0;
  }

  get rcode(): number {
    return this.meta.rcode;
  }

  /** The stored reply as a new Buffer (the slow path decodes it). */
  reply(): Buffer {
    return Buffer.from(this.wire, "latin1");
  }

  /** Writes the stored reply at the start of `out`, which has room for it. */
  copyInto(out: Buffer): void {
    writeLatin1(out, this.wire);
  }
}

type Latin1Writer = Buffer & { latin1Write?: (s: string, offset: number, length: number) => number };

/** Buffer's own latin1Write where this Node has it (undocumented, not typed, and 12 ns faster per call
 * than write(s, 0, "latin1"), which goes through the encoding switch), else write. */
const writeLatin1: (out: Buffer, s: string) => void =
  typeof (Buffer.prototype as Latin1Writer).latin1Write === "function"
    ? (out, s) => (out as Latin1Writer).latin1Write!(s, 0, s.length)
    : (out, s) => out.write(s, 0, "latin1");

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
 * layout rotate needs; undefined for any other shape. */
export function rotationOf(reply: Uint8Array, questionEnd: number): Rotation | undefined {
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

/** Room for the records a rotation moves to the end: at most 65535 octets of reply. */
const rotateScratch = Buffer.allocUnsafe(65536);

/** Rotates the answer records of `out` (a copy of the stored reply) one place further than last time. */
export function rotate(out: Buffer, r: Rotation): void {
  const k = r.turn % r.count;
  r.turn = k + 1;
  if (k === 0) return;
  const split = r.at + k * r.size;
  const end = r.at + r.count * r.size;
  out.copy(rotateScratch, 0, r.at, split);
  out.copyWithin(r.at, split, end);
  rotateScratch.copy(out, r.at + (end - split), 0, split - r.at);
}

/** Entries the sweep looks at with each store (twice as fast as entries come, so a walk ends), and the
 * stores between two walks. */
const SWEEP_PER_SET = 2;
const SWEEP_REST = 256;

export class AnswerCache {
  #entries = new Map<string, CachedAnswer>();
  /** The entries oldest first, one walk kept across evictions. V8 leaves a removed entry's slot in the
   * table until it rehashes, and a new walk skips all of them from the start: one walk per eviction
   * cost 10-130 us per stored reply with the cache full, this one skips each slot once. Entries before
   * its place have all gone (new ones are added at the end), so it always stands at the oldest.
   * Kept only while the cache is (nearly) full and evicting: a walk that does not move holds on to
   * every table the Map has outgrown since, with the entries removed from them (issue 25: 12 MB of
   * removed replies after 5 minutes of API churn, the cache never full). */
  #oldest: MapIterator<CachedAnswer> | undefined;
  /** Below this many entries the walk is let go of. */
  readonly #walkFrom: number;
  /** A walk over the entries that drops the ones past their time, SWEEP_PER_SET entries further with
   * every store, then a rest of SWEEP_REST stores before the next: an entry nobody asks for again
   * would otherwise stay until the cache is full (issue 25: API churn, whose deleted names' NXDOMAIN
   * answers piled up at 50 a second, 17,000 in 6 minutes). It moves with every store, after the Map
   * grew, so the tables the Map outgrew are let go by the next store. Near capacity the eviction walk
   * lets go of the oldest entries instead. */
  #sweep: MapIterator<CachedAnswer> | undefined;
  #rested = 0;
  /** The clock of the last get(): every store follows the get() of its query. */
  #lastNow = -Infinity;
  /** The first entry of each owner name (the key without its 5 trailing type, class and EDNS octets);
   * the others follow through CachedAnswer.sameName. */
  #byName = new Map<string, CachedAnswer>();
  #generation = 0;
  /** The generation of the last invalidate(). */
  #clearedAt = 0;
  /** Name part -> the generation of its last invalidation, oldest first, at most #rememberNames. */
  #changedAt = new Map<string, number>();
  /** Invalidations up to this generation are no longer in #changedAt: older replies are refused. */
  #forgottenUpTo = 0;
  readonly #rememberNames: number;
  readonly capacity: number;
  readonly #evict = (e: StoredAnswer) => this.#remove(e as CachedAnswer);

  constructor(capacity = 100_000, rememberNames = 10_000) {
    this.capacity = capacity;
    this.#walkFrom = Math.floor(capacity * 0.9);
    this.#rememberNames = rememberNames;
  }

  get generation(): number {
    return this.#generation;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry for the key while it may still answer (fresh, or stale within serve_stale), else
   * undefined. Whether the fast path may replay it is the caller's check of `expires`. */
  get(key: string, now: number): CachedAnswer | undefined {
    this.#lastNow = now;
    const e = this.#entries.get(key);
    if (e === undefined || e.dropAt > now) return e;
    this.#remove(e);
    return undefined;
  }

  /** Stores a reply computed under `generation`, unless the data behind its name changed meanwhile. */
  set(key: string, entry: CachedAnswer, generation: number): void {
    const name = key.slice(0, -5);
    if (generation !== this.#generation) {
      if (generation < this.#clearedAt || generation < this.#forgottenUpTo) return;
      if ((this.#changedAt.get(name) ?? 0) > generation) return;
    }
    const old = this.#entries.get(key);
    if (old !== undefined) this.#remove(old);
    else if (this.#entries.size >= this.capacity) {
      // Oldest first: a Map iterates in insertion order. A finished walk stays finished: start anew.
      let oldest = (this.#oldest ??= this.#entries.values()).next();
      if (oldest.done === true) oldest = (this.#oldest = this.#entries.values()).next();
      if (oldest.done !== true) this.#remove(oldest.value);
    }
    entry.key = key;
    answerCacheStats.entries++;
    const first = this.#byName.get(name);
    entry.sameName = first;
    if (first !== undefined) first.prevSameName = entry;
    this.#byName.set(name, entry);
    this.#entries.set(key, entry);
    if (this.#oldest === undefined) this.#sweepOn();
    else this.#sweep = undefined;
    const kept = entry.kept;
    if (kept !== undefined) kept.keeper.admit(entry, kept.kind, this.#evict);
  }

  invalidate(): void {
    this.#clearedAt = ++this.#generation;
    this.#changedAt.clear();
    answerCacheStats.entries -= this.#entries.size;
    for (const e of this.#entries.values()) e.kept?.keeper.forget(e, e.kept.kind);
    this.#entries.clear();
    this.#byName.clear();
    this.#oldest = undefined;
    this.#sweep = undefined;
  }

  /** Drops the entries for these canonical names ("a.example."), every type and EDNS state. */
  invalidateNames(names: Iterable<string>): void {
    const generation = ++this.#generation;
    for (const name of names) {
      const wire = wireKey(name);
      // Moved to the end: #changedAt stays in generation order, so the oldest go first.
      this.#changedAt.delete(wire);
      this.#changedAt.set(wire, generation);
      for (let e = this.#byName.get(wire); e !== undefined; e = e.sameName) this.#remove(e);
    }
    for (const [wire, at] of this.#changedAt) {
      if (this.#changedAt.size <= this.#rememberNames) break;
      this.#changedAt.delete(wire);
      this.#forgottenUpTo = at;
    }
  }

  #sweepOn(): void {
    if (this.#sweep === undefined) {
      if (++this.#rested < SWEEP_REST) return;
      this.#rested = 0;
      this.#sweep = this.#entries.values();
    }
    for (let k = 0; k < SWEEP_PER_SET; k++) {
      const next = this.#sweep.next();
      if (next.done === true) {
        this.#sweep = undefined;
        return;
      }
      if (next.value.dropAt <= this.#lastNow) this.#remove(next.value);
    }
  }

  /** Removes this very entry (not a newer one under its key). Its sameName link is left as it is, so
   * a walk of the list that removes as it goes carries on. */
  #remove(e: CachedAnswer): void {
    if (this.#entries.get(e.key) !== e) return;
    this.#entries.delete(e.key);
    if (this.#entries.size < this.#walkFrom) this.#oldest = undefined;
    answerCacheStats.entries--;
    e.kept?.keeper.forget(e, e.kept.kind);
    const next = e.sameName;
    const prev = e.prevSameName;
    if (next !== undefined) next.prevSameName = prev;
    if (prev !== undefined) prev.sameName = next;
    else if (next !== undefined) this.#byName.set(e.key.slice(0, -5), next);
    else this.#byName.delete(e.key.slice(0, -5));
    e.prevSameName = undefined;
  }

  /** Approximate bytes held, for metrics. */
  bytes(): number {
    let n = 0;
    for (const [k, e] of this.#entries) n += k.length + e.wire.length + 64;
    return n;
  }
}
