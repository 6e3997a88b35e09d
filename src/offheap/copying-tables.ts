// Tables that keep every value as its codec's bytes and decode it on each read: what a shared index
// does, without the sharing. Tests run the store over them so that code which relies on getting back
// the object it stored (identity, an array changed in place) fails here rather than in a worker.

import { ByteReader, ByteWriter } from "./bytes.ts";
import type { Codec, Table, Tables } from "./table.ts";

class CopyingTable<V> implements Table<V> {
  readonly #bytes = new Map<string, Buffer>();
  readonly #codec: Codec<V>;
  readonly #w = new ByteWriter();
  readonly #r = new ByteReader();

  constructor(codec: Codec<V>) {
    this.#codec = codec;
  }

  get size(): number {
    return this.#bytes.size;
  }

  get(key: string): V | undefined {
    const b = this.#bytes.get(key);
    if (b === undefined) return undefined;
    const v = this.#codec.read(this.#r.at(b, 0));
    if (this.#r.pos !== b.length) throw new Error(`codec read ${this.#r.pos} of ${b.length} bytes`);
    return v;
  }

  has(key: string): boolean {
    return this.#bytes.has(key);
  }

  set(key: string, value: V): void {
    this.#w.reset();
    this.#codec.write(this.#w, value);
    this.#bytes.set(key, Buffer.from(this.#w.bytes));
  }

  delete(key: string): boolean {
    return this.#bytes.delete(key);
  }

  /** Newest key first: not insertion order, so code that relies on that order shows it. */
  *keys(): IterableIterator<string> {
    yield* [...this.#bytes.keys()].reverse();
  }

  *values(): IterableIterator<V> {
    for (const k of this.keys()) yield this.get(k)!;
  }

  *entries(): IterableIterator<[string, V]> {
    for (const k of this.keys()) yield [k, this.get(k)!];
  }
}

/** Tables that round-trip every value through its codec (for tests). One table per name: a writer
 * store and reader stores given the same Tables share them, as they would a shared index. */
export function copyingTables(): Tables {
  const made = new Map<string, CopyingTable<unknown>>();
  return {
    table: <V>(name: string, codec: Codec<V>): Table<V> => {
      let t = made.get(name);
      if (t === undefined) made.set(name, (t = new CopyingTable(codec as Codec<unknown>)));
      return t as Table<V>;
    },
  };
}
