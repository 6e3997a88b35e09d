// A set of tables in one arena, written by one thread and read by others: the writer's SharedIndex and
// each reader thread's IndexReader. Both are `Tables`, so the same store code runs on either side.
//
// Consistency across tables (a service and its slices) is a sequence lock: the writer makes its
// changes inside write sections, and the sequence word is odd while one is open. A section opens at its
// first change, not where write() begins: what the writer reads and computes before it changes a table
// (a watch event's footprints) holds no reader up, since no other thread writes, and a section that
// changes nothing moves nothing. In a watch storm the writer is inside write() nearly all the time;
// readers waited for those whole sections (about 1,000 waits a second, 100-240 ms of each second of
// the answering thread's, at 10k services). A reader runs its
// whole question inside read(): when the sequence moved while it read, it reads again. Memory safety
// does not depend on the retry (arena.ts): a reader racing the writer sees old or new entries, never
// torn ones, so a read that is thrown away did no harm.

import {
  Arena,
  ArenaView,
  H,
  MAX_READERS,
  MAX_TABLES,
  type ArenaHandle,
  type ArenaOptions,
} from "./arena.ts";
import { ByteWriter } from "./bytes.ts";
import {
  SharedTable,
  SharedTableView,
  hashKey,
  rootOf,
  type ReadGuard,
  type WriteGuard,
} from "./shared-table.ts";
import type { Codec, Tables } from "./table.ts";

/** The attempt from which a reader asks the writer not to open a section until it has read: the first.
 * A read is tens of microseconds and answers come first; a storm of changes keeps the writer busy
 * without a gap long enough for one read (asking from the 4th attempt, as before, a storm's reads
 * waited for several sections each). */
const ASK_AFTER = 1;
/** Attempts after which a reader takes what it read; counted in IndexReader.givenUp. */
const MAX_ATTEMPTS = 64;
/** How long a reader waits for an open write section to close, and the writer for a reader that
 * asked it to pause, in ms. */
const WAIT_MS = 2;

/** The writer's side. */
export class SharedIndex implements Tables, WriteGuard {
  /** The process's indexes in use: a reader thread that dies leaves its slot in each. */
  static readonly #live = new Set<SharedIndex>();
  readonly #arena: Arena;
  readonly #writer = new ByteWriter();
  readonly #tables = new Set<string>();
  #depth = 0;
  /** The open section changed a table: the sequence word is odd. */
  #open = false;
  /** What waits for the section to close (afterWrite). */
  #after: (() => void)[] = [];

  constructor(o?: ArenaOptions) {
    this.#arena = new Arena(o);
    SharedIndex.#live.add(this);
  }

  /** The reader thread of `slot` is gone (it may have died inside a read): every index forgets it. */
  static clearReaderEverywhere(slot: number): void {
    for (const index of SharedIndex.#live) index.clearReader(slot);
  }

  /** No thread reads this index any more (its store was stopped). */
  retire(): void {
    SharedIndex.#live.delete(this);
  }

  /** What a reader thread opens the index with (postMessage shares the buffer). */
  get handle(): ArenaHandle {
    return this.#arena.handle;
  }

  /** Bytes taken from the buffer, and in entries and slot arrays in use. */
  get used(): { top: number; live: number } {
    return this.#arena.used;
  }

  /** Bytes in entries and slot arrays in use. */
  bytes(): number {
    return this.#arena.used.live;
  }

  table<V>(name: string, codec: Codec<V>): SharedTable<V> {
    if (this.#tables.has(name)) throw new Error(`shared index: table ${name} made twice`);
    if (this.#tables.size >= MAX_TABLES) throw new Error(`shared index: more than ${MAX_TABLES} tables`);
    const root = rootOf(this.#tables.size);
    this.#tables.add(name);
    this.#arena.words[root] = hashKey(name);
    return new SharedTable({ arena: this.#arena, root, codec, writer: this.#writer, sections: this });
  }

  /** Inside a write section. */
  get writing(): boolean {
    return this.#depth > 0;
  }

  /** Runs `fn`, which changes tables, as one section: readers see all of its changes or none. */
  write<T>(fn: () => T): T {
    this.#depth++;
    let out: T;
    try {
      out = fn();
    } finally {
      if (--this.#depth === 0 && this.#open) {
        this.#open = false;
        const w = this.#arena.words;
        Atomics.add(w, H.SEQ, 1);
        Atomics.add(w, H.EPOCH, 1);
        Atomics.notify(w, H.SEQ);
        this.#arena.reclaim();
      }
    }
    if (this.#depth === 0 && this.#after.length > 0) {
      const after = this.#after;
      this.#after = [];
      for (const f of after) f();
    }
    return out;
  }

  /** Runs `fn` once the section open now has closed (at once outside one): work a change brings that
   * reads no table, such as dropping cached answers, need not hold readers up. */
  afterWrite(fn: () => void): void {
    if (this.#depth === 0) fn();
    else this.#after.push(fn);
  }

  /** A table is about to change inside the section: it opens now, once a reader that asked is done. */
  changing(): void {
    if (this.#open) return;
    const w = this.#arena.words;
    const waiting = Atomics.load(w, H.WAITING);
    if (waiting > 0) Atomics.wait(w, H.WAITING, waiting, WAIT_MS);
    Atomics.add(w, H.SEQ, 1);
    this.#open = true;
  }

  /** A reader thread that held `slot` is gone: what it was reading may be reused. */
  clearReader(slot: number): void {
    this.#arena.clearReader(slot);
  }
}

/** A reader thread's side. Each reader thread has a slot of its own (0 to MAX_READERS - 1). */
export class IndexReader implements Tables, ReadGuard {
  readonly #view: ArenaView;
  readonly #slot: number;
  #depth = 0;
  /** Reads that went on being overtaken by the writer and were taken as they were. */
  givenUp = 0;
  /** Reads done again because the writer changed the index meanwhile. */
  retried = 0;

  constructor(handle: ArenaHandle, slot: number) {
    if (!Number.isInteger(slot) || slot < 0 || slot >= MAX_READERS) {
      throw new Error(`shared index: reader slot ${slot} is not in 0..${MAX_READERS - 1}`);
    }
    this.#view = new ArenaView(handle.sab);
    this.#slot = H.READERS + slot;
    const w = this.#view.words;
    for (let high = Atomics.load(w, H.READER_HIGH); high <= slot; high = Atomics.load(w, H.READER_HIGH)) {
      if (Atomics.compareExchange(w, H.READER_HIGH, high, slot + 1) === high) break;
    }
  }

  table<V>(name: string, codec: Codec<V>): SharedTableView<V> {
    const h = hashKey(name);
    for (let i = 0; i < MAX_TABLES; i++) {
      if (this.#view.words[rootOf(i)] === h) return new SharedTableView(this.#view, rootOf(i), codec, this);
    }
    throw new Error(`shared index: no table ${name}`);
  }

  /** Inside a read section. */
  get reading(): boolean {
    return this.#depth > 0;
  }

  /** Runs `fn`, which reads tables, on a view no write section changed while it ran. */
  read<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    const w = this.#view.words;
    this.#depth++;
    let asked = false;
    try {
      for (let attempt = 1; ; attempt++) {
        if (attempt === ASK_AFTER) {
          Atomics.add(w, H.WAITING, 1);
          asked = true;
        }
        this.#announce();
        let seq = Atomics.load(w, H.SEQ);
        if ((seq & 1) !== 0) {
          Atomics.wait(w, H.SEQ, seq, WAIT_MS);
          seq = Atomics.load(w, H.SEQ);
        }
        // After the sequence word, not before: a section that grew the buffer and closed in between
        // would leave views short of what that word publishes, and the read would pass as clean.
        this.#view.refresh();
        let out: T;
        try {
          out = fn();
        } catch (err) {
          // A read that raced a write section may reach past this thread's views (the buffer grew
          // meanwhile, and the new entries are past them): read again. Otherwise it is a bug.
          if (attempt >= MAX_ATTEMPTS || (Atomics.load(w, H.SEQ) === seq && !this.#view.stale)) throw err;
          this.retried++;
          Atomics.store(w, this.#slot, 0);
          continue;
        }
        const clean = (seq & 1) === 0 && Atomics.load(w, H.SEQ) === seq;
        if (clean || attempt === MAX_ATTEMPTS) {
          if (!clean) this.givenUp++;
          return out;
        }
        this.retried++;
        Atomics.store(w, this.#slot, 0);
      }
    } finally {
      Atomics.store(w, this.#slot, 0);
      if (asked) {
        Atomics.sub(w, H.WAITING, 1);
        Atomics.notify(w, H.WAITING);
      }
      this.#depth--;
    }
  }

  /** Tells the writer the epoch this read began at; again until the epoch holds still meanwhile, so
   * the writer cannot have reclaimed between our reading the epoch and its seeing our slot. */
  #announce(): void {
    const w = this.#view.words;
    for (;;) {
      const e = Atomics.load(w, H.EPOCH);
      Atomics.store(w, this.#slot, e);
      if (Atomics.load(w, H.EPOCH) === e) return;
    }
  }
}
