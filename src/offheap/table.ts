// The contract of a keyed table whose values may live off the JS heap: the kubernetes store keeps every
// index it has in tables, so the same store code runs over Maps in one thread or over a shared index
// (shared-table.ts) that a writer thread fills and worker threads read.

import type { ByteReader, ByteWriter } from "./bytes.ts";

/** How values of one table become bytes and back. `read` must read exactly what `write` wrote. */
export interface Codec<V> {
  write(w: ByteWriter, v: V): void;
  read(r: ByteReader): V;
}

/** A Map of string keys to values that are stored by value: what `get` returns is equal to, not the
 * same object as, what `set` was given, and must not be changed in place. Iteration order is the
 * table's own (not insertion order). */
export interface Table<V> {
  readonly size: number;
  get(key: string): V | undefined;
  has(key: string): boolean;
  set(key: string, value: V): void;
  delete(key: string): boolean;
  keys(): IterableIterator<string>;
  values(): IterableIterator<V>;
  entries(): IterableIterator<[string, V]>;
}

/** Where a store gets its tables, one per name: Maps (heapTables) or a shared index's tables. */
export interface Tables {
  table<V>(name: string, codec: Codec<V>): Table<V>;
  /** Runs `fn`, which reads several tables, on one consistent view of them (a reader thread's
   * IndexReader; absent where the tables cannot change meanwhile). */
  read?<T>(fn: () => T): T;
  /** Bytes the tables' entries take, where that is known exactly (a shared index's arena). */
  bytes?(): number;
}

/** Tables that are plain Maps, for a store read by its own thread only. */
export const heapTables: Tables = {
  table: <V>() => new Map<string, V>(),
};
