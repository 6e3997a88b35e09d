// A map from a key to a set of strings, kept in a table (../../../offheap/table.ts) of string lists.
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

  /** A rough estimate of the heap it takes, were it a Map of arrays. */
  bytes(): number {
    let b = 0;
    for (const [k, v] of this.#t.entries()) b += 72 + k.length + 8 * v.length;
    return b;
  }
}
