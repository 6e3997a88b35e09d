// Keys counted by the writer, published by presence. The store counts services per namespace and
// addresses below each partial reverse name, but readers only ask whether a key is there. So the counts
// stay in the writer's own Map and the table changes only when a key appears or goes: at 100k services
// that is a few hundred table writes for the first list instead of about 950k (each a new entry in a
// shared index, measured with the write counts of `node bench/store-load.ts --shared`).

import type { Table } from "../../../offheap/table.ts";

export class CountedKeys {
  readonly #present: Table<number>;
  readonly #counts = new Map<string, number>();

  /** `present` holds 1 for each key counted above zero. */
  constructor(present: Table<number>) {
    this.#present = present;
  }

  /** Whether `key` is counted above zero (a reader store's answer comes from the table). */
  has(key: string): boolean {
    return this.#present.has(key);
  }

  /** Adds `delta` to `key`'s count; true when the key appeared or went. */
  add(key: string, delta: number): boolean {
    const before = this.#counts.get(key) ?? 0;
    const n = before + delta;
    if (n > 0) this.#counts.set(key, n);
    else this.#counts.delete(key);
    if (before > 0 === n > 0) return false;
    if (n > 0) this.#present.set(key, 1);
    else this.#present.delete(key);
    return true;
  }

  keys(): IterableIterator<string> {
    return this.#present.keys();
  }
}
