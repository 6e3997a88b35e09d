// A map from a key to a set of strings, kept in a table (../../../offheap/table.ts) of string lists
// (on the heap, a LoneStringTable).
// Lists are stored by value: each change reads the list, makes a new one and stores that; a list read
// back is never changed in place. The order of a key's values is the order they were added in.

import type { Table } from "../../../offheap/table.ts";

const NONE: readonly string[] = Object.freeze([]);

export class OneOrMany {
  readonly #t: Table<readonly string[]>;

  constructor(table: Table<readonly string[]>) {
    this.#t = table;
  }

  get size(): number {
    return this.#t.size;
  }

  /** The values under `k`, empty when none. */
  get(k: string): readonly string[] {
    return this.#t.get(k) ?? NONE;
  }

  /** Adds `v` under `k`; true when `k` had no value before. */
  add(k: string, v: string): boolean {
    const cur = this.#t.get(k);
    if (cur === undefined) {
      this.#t.set(k, [v]);
      return true;
    }
    if (!cur.includes(v)) this.#t.set(k, [...cur, v]);
    return false;
  }

  /** Removes `v` from `k`; true when that left `k` without a value. */
  delete(k: string, v: string): boolean {
    const cur = this.#t.get(k);
    if (cur === undefined || !cur.includes(v)) return false;
    if (cur.length > 1) {
      this.#t.set(
        k,
        cur.filter((x) => x !== v),
      );
      return false;
    }
    this.#t.delete(k);
    return true;
  }

  /** A rough estimate of the heap it takes on the heap (LoneStringTable): an array only for keys with
   * several values. */
  bytes(): number {
    let b = 0;
    for (const [k, v] of this.#t.entries()) b += 64 + k.length + (v.length > 1 ? 16 * v.length : 0);
    return b;
  }
}

/** A table of string lists over a Map that keeps a lone string without an array around it, for a
 * store on the heap (heapTables): nearly every address is published by one service and nearly every
 * service has one EndpointSlice, and an array per key costs about 56 bytes, times 280k addresses at
 * 100k services. */
export class LoneStringTable implements Table<readonly string[]> {
  readonly #m = new Map<string, string | readonly string[]>();

  get size(): number {
    return this.#m.size;
  }

  get(key: string): readonly string[] | undefined {
    const v = this.#m.get(key);
    return typeof v === "string" ? [v] : v;
  }

  has(key: string): boolean {
    return this.#m.has(key);
  }

  set(key: string, value: readonly string[]): void {
    this.#m.set(key, value.length === 1 ? value[0] : [...value]);
  }

  delete(key: string): boolean {
    return this.#m.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.#m.keys();
  }

  *values(): IterableIterator<readonly string[]> {
    for (const k of this.#m.keys()) yield this.get(k)!;
  }

  *entries(): IterableIterator<[string, readonly string[]]> {
    for (const k of this.#m.keys()) yield [k, this.get(k)!];
  }
}
