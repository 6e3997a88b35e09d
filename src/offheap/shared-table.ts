// One table of a shared index: an open-addressing hash table of string keys in the arena. A slot is
// two words, the key's hash and the offset of an entry block ([key length, value length, key, value]).
// Entries are immutable: a set writes a new entry and swaps the slot's offset in one atomic store, a
// delete marks the slot with a tombstone, and a table that fills up is copied into a new slot array
// whose offset replaces the old one in the root, in one store too. The old blocks go back to the arena
// only once no reader can reach them (arena.ts), so a reader always sees whole entries: the table as
// it was before a change or after it.

import { H, type Arena, type ArenaView } from "./arena.ts";
import { ByteReader, ByteWriter } from "./bytes.ts";
import type { Codec, Table } from "./table.ts";

const EMPTY = 0;
const TOMBSTONE = 1;
/** Key length word: this bit says the key is UTF-16 (it has a character above 255), not Latin-1. */
const WIDE = 0x80000000;
/** Slot array block: [capacity, 0] then capacity slots of [hash, entry]. */
const SLOTS_AT = 2;
const MIN_CAPACITY = 16;
/** Values a table's reader remembers (SharedTableView's memo); a power of two. Few: the memo is for
 * the reads of one question or one change, and a value it holds outlives young collections. With 256
 * a watch storm's decoded slices and services were promoted to the old generation (38 KB per young
 * collection against 7 KB with 16, `bench/watch-event-cost.ts`) and collected by full collections
 * the answering thread waits for; the miss path read no faster with 256. */
const MEMO = 16;
/** The stamp of the writer's remembered values: even, and no sequence word a reader sees in practice
 * (it would take 2^31 write sections to wrap there). */
const WRITER = -2;

/** The root of table `index` (its word offset in the header). */
export function rootOf(index: number): number {
  return H.ROOTS + index * 4;
}

/** The bytes a key takes in its entry, from its length word. */
function keyBytes(k: number): number {
  return (k & WIDE) !== 0 ? 2 * (k & ~WIDE) : k;
}

/** FNV-1a of the key's UTF-16 code units, kept clear of the two marks. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0 < 2 ? h + 2 : h | 0;
}

/** What a reader thread's reads go through: a read section, which keeps what they reach from being
 * reused meanwhile (shared-index.ts). A read made outside one opens one of its own. */
export interface ReadGuard {
  readonly reading: boolean;
  read<T>(fn: () => T): T;
}

/** Reads a table; the writer's SharedTable adds the changes. One reader object per thread and table. */
export class SharedTableView<V> implements Table<V> {
  protected readonly view: ArenaView;
  protected readonly root: number;
  protected readonly codec: Codec<V>;
  readonly #reader = new ByteReader();
  readonly #guard: ReadGuard | undefined;
  // The last values read, by key hash: one question reads the same service, namespace and slice list
  // several times (the name tree, the exposure check, the endpoints), and a change reads a service's
  // slices before and after it, and each read would decode the value again. In a reader thread an entry
  // holds while the index's sequence word is the one it was read under (even: no write section open);
  // any write section moves it, so nothing stale is ever served. The writer's own table stamps its
  // entries WRITER and forgets a key when it changes it, so it keeps them inside its write sections.
  readonly #memoKeys: (string | undefined)[] = new Array<string | undefined>(MEMO).fill(undefined);
  readonly #memoSeqs = new Int32Array(MEMO).fill(1);
  readonly #memoValues: (V | undefined)[] = new Array<V | undefined>(MEMO).fill(undefined);

  /** `guard` is the reader thread's; the writer's own tables have none. */
  constructor(view: ArenaView, root: number, codec: Codec<V>, guard?: ReadGuard) {
    this.view = view;
    this.root = root;
    this.codec = codec;
    this.#guard = guard;
  }

  get size(): number {
    return Atomics.load(this.view.words, this.root + 2);
  }

  get(key: string): V | undefined {
    if (this.#guard?.reading === false) return this.#guard.read(() => this.get(key));
    const seq = this.writes ? WRITER : Atomics.load(this.view.words, H.SEQ);
    const h = hashKey(key);
    const m = h & (MEMO - 1);
    if (this.#memoSeqs[m] === seq && this.#memoKeys[m] === key) return this.#memoValues[m];
    const e = this.find(key, h);
    const v = e === 0 ? undefined : this.valueAt(e);
    // Not when the buffer grew past this thread's views: entries beyond them read as absent or cut
    // short, and the sequence word may already be the one that published them (the read section's
    // retry, under that same word, would take the remembered value as clean).
    if ((seq & 1) === 0 && !this.view.stale) {
      this.#memoSeqs[m] = seq;
      this.#memoKeys[m] = key;
      this.#memoValues[m] = v;
    }
    return v;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** This is the writer's table (SharedTable). */
  protected get writes(): boolean {
    return false;
  }

  /** The writer changed `key` (hash `h`): its remembered value is gone. */
  protected forget(key: string, h: number): void {
    const m = h & (MEMO - 1);
    if (this.#memoKeys[m] === key) this.#memoKeys[m] = undefined;
  }

  set(_key: string, _value: V): void {
    throw new Error("a shared table is written by its writer thread only");
  }

  delete(_key: string): boolean {
    throw new Error("a shared table is written by its writer thread only");
  }

  // Iterators outside a read section read everything at once inside one: a generator left half run
  // would hold entries a section no longer protects.

  keys(): IterableIterator<string> {
    if (this.#guard?.reading === false) return this.#guard.read(() => [...this.#keys()]).values();
    return this.#keys();
  }

  values(): IterableIterator<V> {
    if (this.#guard?.reading === false) return this.#guard.read(() => [...this.#values()]).values();
    return this.#values();
  }

  entries(): IterableIterator<[string, V]> {
    if (this.#guard?.reading === false) return this.#guard.read(() => [...this.#entries()]).values();
    return this.#entries();
  }

  *#keys(): IterableIterator<string> {
    for (const e of this.entryOffsets()) yield this.keyAt(e);
  }

  *#values(): IterableIterator<V> {
    for (const e of this.entryOffsets()) yield this.valueAt(e);
  }

  *#entries(): IterableIterator<[string, V]> {
    for (const e of this.entryOffsets()) yield [this.keyAt(e), this.valueAt(e)];
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /** The entry offset of `key` (whose hash is `h`), 0 when absent. */
  protected find(key: string, h: number): number {
    const w = this.view.words;
    const slots = Atomics.load(w, this.root + 1);
    if (slots === 0) return 0;
    const mask = w[slots >> 2] - 1;
    const base = (slots >> 2) + SLOTS_AT;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const sh = Atomics.load(w, base + 2 * i);
      if (sh === EMPTY) return 0;
      if (sh !== h) continue;
      const e = Atomics.load(w, base + 2 * i + 1);
      if (e !== 0 && this.keyIs(e, key)) return e;
    }
  }

  /** The entries of every slot in use, as the slot array is now. */
  protected *entryOffsets(): Generator<number> {
    const w = this.view.words;
    const slots = Atomics.load(w, this.root + 1);
    if (slots === 0) return;
    const capacity = w[slots >> 2];
    const base = (slots >> 2) + SLOTS_AT;
    for (let i = 0; i < capacity; i++) {
      const sh = Atomics.load(w, base + 2 * i);
      if (sh === EMPTY || sh === TOMBSTONE) continue;
      const e = Atomics.load(w, base + 2 * i + 1);
      if (e !== 0) yield e;
    }
  }

  protected keyAt(e: number): string {
    const k = this.view.words[e >> 2];
    const n = k & ~WIDE;
    return (k & WIDE) !== 0
      ? this.view.bytes.toString("utf16le", e + 8, e + 8 + 2 * n)
      : this.view.bytes.toString("latin1", e + 8, e + 8 + n);
  }

  protected valueAt(e: number): V {
    return this.codec.read(this.#reader.at(this.view.bytes, e + 8 + keyBytes(this.view.words[e >> 2])));
  }

  protected keyIs(e: number, key: string): boolean {
    const k = this.view.words[e >> 2];
    if ((k & ~WIDE) !== key.length) return false;
    const b = this.view.bytes;
    if ((k & WIDE) !== 0) {
      for (let i = 0, p = e + 8; i < key.length; i++, p += 2) {
        if ((b[p] | (b[p + 1] << 8)) !== key.charCodeAt(i)) return false;
      }
      return true;
    }
    for (let i = 0, p = e + 8; i < key.length; i++, p++) if (b[p] !== key.charCodeAt(i)) return false;
    return true;
  }
}

/** The writer's write sections (shared-index.ts): a change made outside one is a section of its own. */
export interface WriteGuard {
  readonly writing: boolean;
  write<T>(fn: () => T): T;
  /** Called inside a section before a table changes: where the section opens for readers. */
  changing(): void;
}

/** The writer's table. */
export class SharedTable<V> extends SharedTableView<V> {
  readonly #arena: Arena;
  readonly #writer: ByteWriter;
  readonly #sections: WriteGuard;
  /** Slots in use or tombstoned: what decides when the array is rebuilt. */
  #filled = 0;

  constructor(o: { arena: Arena; root: number; codec: Codec<V>; writer: ByteWriter; sections: WriteGuard }) {
    super(o.arena, o.root, o.codec);
    this.#arena = o.arena;
    this.#writer = o.writer;
    this.#sections = o.sections;
  }

  protected override get writes(): boolean {
    return true;
  }

  override set(key: string, value: V): void {
    if (!this.#sections.writing) return this.#sections.write(() => this.set(key, value));
    this.#sections.changing();
    if (
      Atomics.load(this.view.words, this.root + 1) === 0 ||
      (this.#filled + 1) * 10 > this.#capacity() * 7
    ) {
      this.#rebuild(this.size + 1);
    }
    const entry = this.#entry(key, value);
    // After the allocations: one may have grown the buffer, and views are made again then (arena.ts).
    const w = this.view.words;
    const h = hashKey(key);
    this.forget(key, h);
    const slots = Atomics.load(w, this.root + 1);
    const mask = w[slots >> 2] - 1;
    const base = (slots >> 2) + SLOTS_AT;
    let free = -1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const sh = w[base + 2 * i];
      if (sh === EMPTY) {
        if (free < 0) {
          free = i;
          this.#filled++;
        }
        break;
      }
      if (sh === TOMBSTONE) {
        if (free < 0) free = i;
        continue;
      }
      if (sh !== h) continue;
      const old = w[base + 2 * i + 1];
      if (!this.keyIs(old, key)) continue;
      Atomics.store(w, base + 2 * i + 1, entry);
      this.#arena.release(old, this.#entrySize(old));
      return;
    }
    // The entry first, then the hash that makes a reader look at it.
    Atomics.store(w, base + 2 * free + 1, entry);
    Atomics.store(w, base + 2 * free, h);
    Atomics.add(w, this.root + 2, 1);
  }

  override delete(key: string): boolean {
    if (!this.#sections.writing) return this.#sections.write(() => this.delete(key));
    const w = this.view.words;
    const slots = Atomics.load(w, this.root + 1);
    if (slots === 0) return false;
    const h = hashKey(key);
    this.forget(key, h);
    const mask = w[slots >> 2] - 1;
    const base = (slots >> 2) + SLOTS_AT;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const sh = w[base + 2 * i];
      if (sh === EMPTY) return false;
      if (sh !== h) continue;
      const e = w[base + 2 * i + 1];
      if (!this.keyIs(e, key)) continue;
      this.#sections.changing();
      Atomics.store(w, base + 2 * i, TOMBSTONE);
      Atomics.sub(w, this.root + 2, 1);
      this.#arena.release(e, this.#entrySize(e));
      return true;
    }
  }

  #capacity(): number {
    const slots = Atomics.load(this.view.words, this.root + 1);
    return slots === 0 ? 0 : this.view.words[slots >> 2];
  }

  /** A new slot array for `live` entries with room to grow, holding the entries of the old one. */
  #rebuild(live: number): void {
    let capacity = MIN_CAPACITY;
    while (live * 2 > capacity) capacity *= 2;
    const bytes = (SLOTS_AT + 2 * capacity) * 4;
    const at = this.#arena.alloc(bytes);
    const w = this.view.words;
    w.fill(0, at >> 2, (at >> 2) + SLOTS_AT + 2 * capacity);
    w[at >> 2] = capacity;
    const base = (at >> 2) + SLOTS_AT;
    const old = Atomics.load(w, this.root + 1);
    // Each old slot keeps its key's hash beside the entry: moved as it is, no key decoded again (that
    // was a fifth of a 100k-service first list).
    const oldCapacity = old === 0 ? 0 : w[old >> 2];
    const oldBase = (old >> 2) + SLOTS_AT;
    for (let j = 0; j < oldCapacity; j++) {
      const h = w[oldBase + 2 * j];
      const e = w[oldBase + 2 * j + 1];
      if (h === EMPTY || h === TOMBSTONE || e === 0) continue;
      let i = h & (capacity - 1);
      while (w[base + 2 * i] !== EMPTY) i = (i + 1) & (capacity - 1);
      w[base + 2 * i] = h;
      w[base + 2 * i + 1] = e;
    }
    this.#filled = this.size;
    Atomics.store(w, this.root + 1, at);
    if (old !== 0) this.#arena.release(old, (SLOTS_AT + 2 * w[old >> 2]) * 4);
  }

  /** Writes the entry block of key and value. */
  #entry(key: string, value: V): number {
    const out = this.#writer;
    out.reset();
    this.codec.write(out, value);
    let wide = false;
    for (let i = 0; i < key.length && !wide; i++) wide = key.charCodeAt(i) > 255;
    const keyLength = wide ? 2 * key.length : key.length;
    const e = this.#arena.alloc(8 + keyLength + out.length);
    const w = this.view.words;
    w[e >> 2] = wide ? key.length | WIDE : key.length;
    w[(e >> 2) + 1] = out.length;
    this.view.bytes.write(key, e + 8, wide ? "utf16le" : "latin1");
    this.view.bytes.set(out.bytes, e + 8 + keyLength);
    return e;
  }

  #entrySize(e: number): number {
    return 8 + keyBytes(this.view.words[e >> 2]) + this.view.words[(e >> 2) + 1];
  }
}
