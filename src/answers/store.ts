// Every reply the server keeps, off the JS object graph: the octets in slabs (slab.ts), and the index,
// the eviction order and the per-name chains in typed arrays, one element per slot. A stored reply is
// a slot number; nothing is allocated per entry, so the collector's work does not grow with the number
// of entries, and a lookup allocates nothing.
//
// Slots are split into pools, each a range of slots with its own capacity and CLOCK hand: pool 0 for
// the replies plugins let the server replay (kubernetes' authoritative answers, forwarded ones for
// their second), and one pool per kind per `cache` for what that cache keeps, so each kind is bounded
// by its own capacity as CoreDNS bounds it. What a pool means is its owner's business (pipeline.ts).
//
// Invalidation: invalidateNames() drops a name's entries of every type (a walk of the name's chain) and
// bumps the generation; a reply computed under an older generation is refused when its own name
// changed since (or everything did), so a slow answer never overwrites a newer truth.

import { Slab, copyBytes, slotMemory } from "./slab.ts";
import { PassingQueue } from "./passing.ts";
import { ChangedNames } from "./changed-names.ts";
import { KEY_TAIL, hashBytes, latin1Bytes } from "../dns/key.ts";
import { wireKey, wireKeyInto } from "../dns/name.ts";

export const NO_SLOT = -1;
/** "No slot" inside the links: slot numbers start at 1, so arrays fresh from the allocator (zeroed,
 * and untouched: not resident until written) need no filling. */
const NONE = 0;

/** Draft.times: cacheClock() ms until which the fast path replays it, at which it goes (>= expires),
 * when a kept reply's TTL started counting down, and its last hit (prefetch). Doubles live in a
 * typed array: stored in an object's fields they may be boxed, a number allocated per store. */
export const EXPIRES = 0;
export const DROP_AT = 1;
export const STORED = 2;
export const LAST_HIT = 3;

/** The fields of a reply to store, filled by the caller (one reused object: put() copies them). */
export class Draft {
  pool = 0;
  readonly times = new Float64Array(4);
  /** The owner's number for what replies of this rcode, plugin and block share (pipeline.ts). */
  meta = 0;
  /** A kept reply's TTL in seconds, counting down from times[STORED]; -1 for a reply replayed as it is. */
  ttl = -1;
  hits = 0;
  /** Answer records to rotate on each replay: count << 16 | size (see replay.ts), 0 for none. */
  rotation = 0;
  /** Bits of FLAG. */
  flags = 0;
  /** The owner's number for the counters that see hits on it, 0 for none. */
  counters = 0;
}

/** Where put() finds the key and the reply to store, and the generation the reply was computed under:
 * the caller's own reused object (answers.ts's Filing), read by put() and not kept. */
export interface PutOctets {
  readonly key: Uint8Array;
  readonly keyFrom: number;
  readonly keyLength: number;
  readonly hash: number;
  readonly reply: Uint8Array;
  readonly replyFrom: number;
  readonly replyLength: number;
  readonly generation: number;
}

export const FLAG = {
  /** The reply answers the question asked (serve_stale_policy prefer_positive keeps it). */
  answers: 1,
  /** A background refresh of it is under way. */
  refreshing: 2,
  /** Held only for its client's retry, in a bounded share of the octets (passing.ts). */
  passing: 4,
} as const;

interface Pool {
  readonly base: number;
  readonly capacity: number;
  /** Slots ever used (base..base+carved-1); the rest have never held a reply. */
  carved: number;
  count: number;
  /** Next slot the CLOCK hand looks at, relative to base. */
  hand: number;
  /** First free slot (linked through #next), or NONE. */
  free: number;
  /** Called once for each entry dropped to make room (not for expiry or invalidation). */
  readonly evicted: (() => void) | undefined;
}

export interface StoreOptions {
  /** Entries of pool 0. */
  capacity?: number;
  /** Octets of replies (and keys) held at most, over every pool. */
  maxBytes?: number;
  /** Slots of the table of names' last invalidations (changed-names.ts): a power of 2. */
  changeSlots?: number;
  /** Octets the passing replies (FLAG.passing) may hold; a sixteenth of maxBytes by default. */
  passingBytes?: number;
}

const EMPTY: Int32Array = new Int32Array(0);

/** Entries past their time are let go by a sweep, not only when a full pool needs their slot: a
 * cluster's churn stores answers asked once (the NXDOMAIN of each deleted Service), which would
 * otherwise sit in pool 0 until it held 100k of them. A put starts a step at most every SWEEP_MS, and
 * a step looks at SWEEP_SLOTS slots: 120k slots in about a minute, for a few microseconds a second. */
const SWEEP_MS = 1000;
const SWEEP_SLOTS = 2048;
/** The slab is rebuilt, and its emptied chunks given back, when it reserves this much over twice what
 * its entries use. */
const GIVE_BACK = 4 * 1024 * 1024;

/** Octets of typed arrays per slot (see #grow): ten Int32, five Uint16, three Uint8, four Float64. */
const PER_SLOT = 10 * 4 + 5 * 2 + 3 + 4 * 8;

export class AnswerStore {
  /** Now (cacheClock() ms), set by the caller before get(): a double passed as an argument to a call
   * V8 does not inline is boxed, a number allocated per query; one in a typed array is not. */
  readonly clock = new Float64Array(1);
  #slab = new Slab();
  readonly #pools: Pool[] = [];
  readonly #maxBytes: number;
  /** Slot numbers in use: 1..#slots. */
  #slots = 0;
  // Per slot.
  #live: Uint8Array = new Uint8Array(0);
  #ref: Uint8Array = new Uint8Array(0);
  #hash = EMPTY;
  /** Next slot in the same hash bucket, or in the pool's free list. */
  #next = EMPTY;
  #nameHash = EMPTY;
  #nameNext = EMPTY;
  #namePrev = EMPTY;
  #block = EMPTY;
  #keyLen: Uint16Array = new Uint16Array(0);
  #replyLen: Uint16Array = new Uint16Array(0);
  #meta: Uint16Array = new Uint16Array(0);
  #ttl = EMPTY;
  #hits = EMPTY;
  #rotation = EMPTY;
  #turn: Uint16Array = new Uint16Array(0);
  #flags: Uint8Array = new Uint8Array(0);
  #counters: Uint16Array = new Uint16Array(0);
  #serial = EMPTY;
  #expires: Float64Array = new Float64Array(0);
  #dropAt: Float64Array = new Float64Array(0);
  #stored: Float64Array = new Float64Array(0);
  #lastHit: Float64Array = new Float64Array(0);
  // Bucket heads, by hash and by name hash.
  #buckets = EMPTY;
  #names = EMPTY;
  #mask = 0;
  #size = 0;
  #generation = 0;
  /** The generation of the last invalidate(). */
  #clearedAt = 0;
  /** The names invalidated lately, with when (changed-names.ts). */
  readonly #changed: ChangedNames;
  /** invalidateNames's wire keys, written here one at a time (a name's wire form is <= 255 octets). */
  readonly #nameOctets = new Uint8Array(256);
  readonly #passing: PassingQueue;
  /** The sweep's next slot, and the clock of its last step. */
  #sweepHand = 0;
  #sweptAt = 0;

  constructor(o: StoreOptions = {}) {
    this.#maxBytes = o.maxBytes ?? 64 * 1024 * 1024;
    this.#changed = new ChangedNames(o.changeSlots);
    this.#passing = new PassingQueue(o.passingBytes ?? this.#maxBytes / 16);
    this.addPool(o.capacity ?? 100_000);
  }

  /** A new pool of `capacity` slots; its number. Grows every array (a start-up cost). */
  addPool(capacity: number, evicted?: () => void): number {
    const base = this.#slots + 1;
    this.#pools.push({ base, capacity, carved: 0, count: 0, hand: 0, free: NONE, evicted });
    this.#grow(this.#slots + capacity);
    return this.#pools.length - 1;
  }

  get generation(): number {
    return this.#generation;
  }

  /** Entries held, over every pool. */
  get size(): number {
    return this.#size;
  }

  poolSize(pool: number): number {
    return this.#pools[pool].count;
  }

  /** The slot holding this key, or NO_SLOT. Expiry is the caller's to judge (dropAt()). */
  find(key: Uint8Array, from: number, length: number, hash: number): number {
    for (let s = this.#buckets[hash & this.#mask]; s !== NONE; s = this.#next[s]) {
      if (this.#hash[s] !== hash || this.#keyLen[s] !== length) continue;
      const chunk = this.#slab.chunk(this.#block[s]);
      const at = this.#slab.offset(this.#block[s]);
      let i = 0;
      while (i < length && chunk[at + i] === key[from + i]) i++;
      if (i === length) return s;
    }
    return NO_SLOT;
  }

  /** find(), dropping an entry past its dropAt at clock[0] (and answering NO_SLOT for it). */
  get(key: Uint8Array, from: number, length: number, hash: number): number {
    const s = this.find(key, from, length, hash);
    if (s === NO_SLOT || this.#dropAt[s] > this.clock[0]) return s;
    this.remove(s);
    return NO_SLOT;
  }

  /**
   * Stores the reply `o` names under its key (replacing what the key held), in draft.pool, unless the
   * data behind its name changed since o.generation. Returns its slot, or NO_SLOT when it was refused
   * or does not fit. Makes room by the pool's CLOCK: an entry hit since the hand last passed gets
   * another round.
   */
  put(d: Draft, o: PutOctets): number {
    const key = o.key;
    const keyFrom = o.keyFrom;
    const keyLen = o.keyLength;
    const hash = o.hash;
    const replyLen = o.replyLength;
    if (o.generation !== this.#generation && !this.#stillCurrent(key, keyFrom, keyLen, o.generation)) {
      return NO_SLOT;
    }
    const old = this.find(key, keyFrom, keyLen, hash);
    if (old !== NO_SLOT) this.remove(old);
    if (this.clock[0] - this.#sweptAt >= SWEEP_MS) this.#sweep();
    const pool = this.#pools[d.pool];
    const need = keyLen + replyLen;
    const passing = (d.flags & FLAG.passing) !== 0;
    if (passing) this.#letPassingGo(need);
    while (this.#slab.usedBytes + need > this.#maxBytes && pool.count > 0) this.#evictOne(pool);
    if (this.#slab.usedBytes + need > this.#maxBytes) return NO_SLOT;
    const s = this.#takeSlot(pool);
    if (this.#slab.reservedBytes > 2 * this.#maxBytes) this.#compact();
    const block = this.#slab.alloc(need);
    const chunk = this.#slab.chunk(block);
    const at = this.#slab.offset(block);
    for (let i = 0; i < keyLen; i++) chunk[at + i] = key[keyFrom + i];
    copyBytes(o.reply, o.replyFrom, replyLen, chunk, at + keyLen);

    this.#live[s] = 1;
    this.#ref[s] = 0;
    this.#block[s] = block;
    this.#keyLen[s] = keyLen;
    this.#replyLen[s] = replyLen;
    this.#hash[s] = hash;
    const b = hash & this.#mask;
    this.#next[s] = this.#buckets[b];
    this.#buckets[b] = s;
    const nh = hashBytes(key, keyFrom, keyFrom + keyLen - KEY_TAIL);
    this.#nameHash[s] = nh;
    const nb = nh & this.#mask;
    const first = this.#names[nb];
    this.#nameNext[s] = first;
    this.#namePrev[s] = NONE;
    if (first !== NONE) this.#namePrev[first] = s;
    this.#names[nb] = s;
    const t = d.times;
    this.#expires[s] = t[EXPIRES];
    this.#dropAt[s] = Math.max(t[EXPIRES], t[DROP_AT]);
    this.#meta[s] = d.meta;
    this.#ttl[s] = d.ttl;
    this.#stored[s] = t[STORED];
    this.#hits[s] = d.hits;
    this.#lastHit[s] = t[LAST_HIT];
    this.#rotation[s] = d.rotation;
    this.#turn[s] = 1;
    this.#flags[s] = d.flags;
    this.#counters[s] = d.counters;
    this.#serial[s]++;
    if (passing) this.#passing.push(s, this.#serial[s], this.#slab.capacity(block));
    pool.count++;
    this.#size++;
    return s;
  }

  /** Drops the entry in slot s. */
  remove(s: number): void {
    if (this.#live[s] === 0) return;
    this.#live[s] = 0;
    const b = this.#hash[s] & this.#mask;
    if (this.#buckets[b] === s) this.#buckets[b] = this.#next[s];
    else {
      let p = this.#buckets[b];
      while (this.#next[p] !== s) p = this.#next[p];
      this.#next[p] = this.#next[s];
    }
    const next = this.#nameNext[s];
    const prev = this.#namePrev[s];
    if (next !== NONE) this.#namePrev[next] = prev;
    if (prev !== NONE) this.#nameNext[prev] = next;
    else this.#names[this.#nameHash[s] & this.#mask] = next;
    this.#slab.release(this.#block[s]);
    const pool = this.#poolOf(s);
    this.#next[s] = pool.free;
    pool.free = s;
    pool.count--;
    this.#size--;
  }

  /** Drops every entry. */
  invalidate(): void {
    this.#clearedAt = ++this.#generation;
    this.#changed.clear();
    for (let s = 1; s <= this.#slots; s++) if (this.#live[s] !== 0) this.remove(s);
  }

  /** Drops the entries of these canonical names ("a.example."), every type and state. */
  invalidateNames(names: Iterable<string>): void {
    const generation = ++this.#generation;
    for (const name of names) {
      let bytes: Uint8Array = this.#nameOctets;
      let length = wireKeyInto(name, bytes);
      if (length < 0) length = (bytes = latin1Bytes(wireKey(name))).length;
      const nh = hashBytes(bytes, 0, length);
      this.#changed.changed(nh, generation);
      for (let s = this.#names[nh & this.#mask]; s !== NONE;) {
        const next = this.#nameNext[s];
        if (this.#nameHash[s] === nh && this.#isName(s, bytes, length)) this.remove(s);
        s = next;
      }
    }
  }

  // Reading an entry.

  keyLength(s: number): number {
    return this.#keyLen[s];
  }
  replyLength(s: number): number {
    return this.#replyLen[s];
  }
  expires(s: number): number {
    return this.#expires[s];
  }
  dropAt(s: number): number {
    return this.#dropAt[s];
  }
  meta(s: number): number {
    return this.#meta[s];
  }
  ttl(s: number): number {
    return this.#ttl[s];
  }
  stored(s: number): number {
    return this.#stored[s];
  }
  counters(s: number): number {
    return this.#counters[s];
  }
  rotation(s: number): number {
    return this.#rotation[s];
  }
  flags(s: number): number {
    return this.#flags[s];
  }
  hits(s: number): number {
    return this.#hits[s];
  }
  lastHit(s: number): number {
    return this.#lastHit[s];
  }
  /** Changes each time the slot takes a new reply: a handle kept across turns checks it. */
  serial(s: number): number {
    return this.#serial[s];
  }
  isLive(s: number): boolean {
    return this.#live[s] !== 0;
  }
  pool(s: number): number {
    const pools = this.#pools;
    let i = pools.length - 1;
    while (pools[i].base > s) i--;
    return i;
  }

  setHits(s: number, hits: number, lastHit: number): void {
    this.#hits[s] = hits;
    this.#lastHit[s] = lastHit;
  }
  setFlag(s: number, flag: number, on: boolean): void {
    this.#flags[s] = on ? this.#flags[s] | flag : this.#flags[s] & ~flag;
  }

  /** Marks an entry as used: the CLOCK hand passes it over once. */
  touch(s: number): void {
    this.#ref[s] = 1;
  }

  /** The next rotation step of the entry (1, 2, ... count, 1, ...). */
  nextTurn(s: number): number {
    const count = this.#rotation[s] >>> 16;
    const k = this.#turn[s] % count;
    this.#turn[s] = k + 1;
    return k;
  }

  /** Copies the stored reply into out[at..]; its length. */
  copyReply(s: number, out: Uint8Array, at: number): number {
    const block = this.#block[s];
    const len = this.#replyLen[s];
    copyBytes(this.#slab.chunk(block), this.#slab.offset(block) + this.#keyLen[s], len, out, at);
    return len;
  }

  /** The stored reply as a Buffer of its own (for the slow path). */
  reply(s: number): Buffer {
    const out = Buffer.allocUnsafe(this.#replyLen[s]);
    this.copyReply(s, out, 0);
    return out;
  }

  /** What the store takes: octets of key and reply its entries hold in the slabs and the slabs have
   * reserved, octets of typed arrays per slot, and of the hash buckets (fixed by the capacity). */
  bytes(): { used: number; reserved: number; perSlot: number; buckets: number } {
    return {
      used: this.#slab.usedBytes,
      reserved: this.#slab.reservedBytes,
      perSlot: PER_SLOT,
      buckets: 2 * 4 * (this.#mask + 1),
    };
  }

  #poolOf(s: number): Pool {
    return this.#pools[this.pool(s)];
  }

  /** Whether entry `s` is of the name whose wire key is `name`'s first `length` octets. */
  #isName(s: number, name: Uint8Array, length: number): boolean {
    if (this.#keyLen[s] - KEY_TAIL !== length) return false;
    const chunk = this.#slab.chunk(this.#block[s]);
    const at = this.#slab.offset(this.#block[s]);
    for (let i = 0; i < length; i++) if (chunk[at + i] !== name[i]) return false;
    return true;
  }

  /** Whether a reply computed under `generation` may still be stored for this key's name. */
  #stillCurrent(key: Uint8Array, from: number, length: number, generation: number): boolean {
    if (generation < this.#clearedAt) return false;
    return this.#changed.lastChange(hashBytes(key, from, from + length - KEY_TAIL)) <= generation;
  }

  /** A slot of the pool for a new entry: a free one, a never-used one, or the CLOCK's victim. */
  #takeSlot(pool: Pool): number {
    if (pool.free === NONE && pool.carved === pool.capacity) this.#evictOne(pool);
    if (pool.free !== NONE) {
      const s = pool.free;
      pool.free = this.#next[s];
      return s;
    }
    return pool.base + pool.carved++;
  }

  /** Drops the pool's next entry not used since the hand last passed it. */
  #evictOne(pool: Pool): void {
    // Two rounds at most: the first clears every reference bit it passes.
    for (let i = 0; i < 2 * pool.carved; i++) {
      const s = pool.base + pool.hand;
      pool.hand = pool.hand + 1 === pool.carved ? 0 : pool.hand + 1;
      if (this.#live[s] === 0) continue;
      if (this.#ref[s] !== 0) {
        this.#ref[s] = 0;
        continue;
      }
      this.remove(s);
      pool.evicted?.();
      return;
    }
  }

  /** One step of the sweep: drops the entries past their dropAt among the next SWEEP_SLOTS slots, then
   * gives back the slab's chunks if the entries let go left most of them empty. */
  #sweep(): void {
    const now = this.clock[0];
    this.#sweptAt = now;
    let s = this.#sweepHand;
    for (let i = Math.min(SWEEP_SLOTS, this.#slots); i > 0; i--) {
      s = s >= this.#slots ? 1 : s + 1;
      if (this.#live[s] !== 0 && this.#dropAt[s] <= now) this.remove(s);
    }
    this.#sweepHand = s;
    this.#letPassingGo(0);
    if (this.#slab.reservedBytes > 2 * this.#slab.usedBytes + GIVE_BACK) this.#compact();
  }

  /** Drops the oldest passing replies while they are gone, past their time, or too many with `need`
   * octets more. */
  #letPassingGo(need: number): void {
    const q = this.#passing;
    const now = this.clock[0];
    while (q.count > 0) {
      const s = q.headSlot;
      const held = this.#live[s] !== 0 && this.#serial[s] === q.headSerial;
      if (held && this.#dropAt[s] > now && q.bytes + need <= q.maxBytes && !q.full) return;
      q.shift();
      if (held) this.remove(s);
    }
  }

  /** Moves every entry into a new slab, when blocks freed in one size class left the chunks holding
   * twice the budget, or the sweep emptied most of them: the old chunks go to the collector at once. */
  #compact(): void {
    const old = this.#slab;
    const fresh = new Slab();
    for (let s = 1; s <= this.#slots; s++) {
      if (this.#live[s] === 0) continue;
      const len = this.#keyLen[s] + this.#replyLen[s];
      const block = fresh.alloc(len);
      copyBytes(
        old.chunk(this.#block[s]),
        old.offset(this.#block[s]),
        len,
        fresh.chunk(block),
        fresh.offset(block),
      );
      this.#block[s] = block;
    }
    this.#slab = fresh;
  }

  #grow(slots: number): void {
    // Slot 0 is never used (NONE), so every array has slots + 1 elements. The arrays are views of one
    // buffer of fresh pages (slotMemory), which become resident only once written, so an entry costs
    // its 85 octets when used, not when its pool is set up. They are copied only when a slot was ever
    // used: pools are added at set-up, before any entry, and a copy would write every page.
    const used = this.#pools.some((p) => p.carved > 0);
    const n = slots + 1;
    const region = slotMemory(n * PER_SLOT + 64);
    let at = 0;
    const view = <T extends Int32Array | Uint16Array | Uint8Array | Float64Array>(
      old: T,
      make: (buf: ArrayBuffer, offset: number, length: number) => T,
      size: number,
    ): T => {
      at = Math.ceil(at / size) * size;
      const b = make(region, at, n);
      at += n * size;
      if (used) b.set(old);
      return b;
    };
    const f64 = (a: Float64Array) => view(a, (r, o, l) => new Float64Array(r, o, l), 8);
    const i32 = (a: Int32Array) => view(a, (r, o, l) => new Int32Array(r, o, l), 4);
    const u16 = (a: Uint16Array) => view(a, (r, o, l) => new Uint16Array(r, o, l), 2);
    const u8 = (a: Uint8Array) => view(a, (r, o, l) => new Uint8Array(r, o, l), 1);
    this.#expires = f64(this.#expires);
    this.#dropAt = f64(this.#dropAt);
    this.#stored = f64(this.#stored);
    this.#lastHit = f64(this.#lastHit);
    this.#hash = i32(this.#hash);
    this.#next = i32(this.#next);
    this.#nameHash = i32(this.#nameHash);
    this.#nameNext = i32(this.#nameNext);
    this.#namePrev = i32(this.#namePrev);
    this.#block = i32(this.#block);
    this.#ttl = i32(this.#ttl);
    this.#hits = i32(this.#hits);
    this.#rotation = i32(this.#rotation);
    this.#serial = i32(this.#serial);
    this.#keyLen = u16(this.#keyLen);
    this.#replyLen = u16(this.#replyLen);
    this.#meta = u16(this.#meta);
    this.#turn = u16(this.#turn);
    this.#counters = u16(this.#counters);
    this.#live = u8(this.#live);
    this.#ref = u8(this.#ref);
    this.#flags = u8(this.#flags);
    this.#slots = slots;
    // Buckets: at least twice the slots, a power of two; rebuilt from the live entries.
    let size = 1024;
    while (size < 2 * slots) size *= 2;
    if (size - 1 !== this.#mask) {
      this.#mask = size - 1;
      const heads = slotMemory(2 * 4 * size);
      this.#buckets = new Int32Array(heads, 0, size);
      this.#names = new Int32Array(heads, 4 * size, size);
      for (let s = 1; s <= slots; s++) {
        if (this.#live[s] === 0) continue;
        const b = this.#hash[s] & this.#mask;
        this.#next[s] = this.#buckets[b];
        this.#buckets[b] = s;
        const nb = this.#nameHash[s] & this.#mask;
        const first = this.#names[nb];
        this.#nameNext[s] = first;
        this.#namePrev[s] = NONE;
        if (first !== NONE) this.#namePrev[first] = s;
        this.#names[nb] = s;
      }
    }
  }
}
