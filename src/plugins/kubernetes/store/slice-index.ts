// EndpointSlices by key, with the keys of each service's slices kept in step: the store keeps the
// slices of Services in one, the multicluster index those of ServiceImports in another. Both kept in
// tables, by value: what `get` returns is a copy.

import type { Table } from "../../../offheap/table.ts";
import type { EndpointGroup } from "../model/slim-types.ts";
import { OneOrMany } from "./one-or-many.ts";

export class SliceIndex<G extends EndpointGroup> {
  readonly #byKey: Table<G>;
  /** A service's key -> the keys of its slices. */
  readonly #byService: OneOrMany;

  constructor(byKey: Table<G>, byService: Table<readonly string[]>) {
    this.#byKey = byKey;
    this.#byService = new OneOrMany(byService);
  }

  get size(): number {
    return this.#byKey.size;
  }

  get(key: string): G | undefined {
    return this.#byKey.get(key);
  }

  /** Puts `next` under `key`, or deletes the slice there when undefined; a slice relabelled to
   * another service moves to its list. */
  set(key: string, next: G | undefined): void {
    const prev = this.#byKey.get(key);
    if (prev && prev.service !== next?.service) this.#byService.delete(prev.service, key);
    if (next) {
      this.#byKey.set(key, next);
      this.#byService.add(next.service, key);
    } else this.#byKey.delete(key);
  }

  /** The keys of the service's slices, in the order they came. */
  keysOf(service: string): readonly string[] {
    return this.#byService.get(service);
  }

  /** The service's slices. A key without a slice is skipped: a reader in another thread may see the
   * list before the writer's next step. */
  of(service: string): G[] {
    const out: G[] = [];
    for (const k of this.#byService.get(service)) {
      const g = this.#byKey.get(k);
      if (g !== undefined) out.push(g);
    }
    return out;
  }

  keys(): IterableIterator<string> {
    return this.#byKey.keys();
  }

  values(): IterableIterator<G> {
    return this.#byKey.values();
  }

  entries(): IterableIterator<[string, G]> {
    return this.#byKey.entries();
  }
}
