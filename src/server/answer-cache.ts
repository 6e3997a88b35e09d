// The fast path: encoded replies keyed by the query's lowercased question and EDNS state. A hit copies
// the stored bytes and patches the ID and the question, so no decode, plugin call or encode happens.
// Any change in the data behind answers calls invalidate(), which drops every entry; a reply computed
// across such a change is not stored (it carries the generation it started under).

export interface CachedAnswer {
  /** The whole reply, encoded for the largest transport (TCP). */
  readonly bytes: Buffer;
  readonly generation: number;
  /** Date.now() past which the entry must not be used. */
  readonly expires: number;
  /** What the finish hooks report for a hit. */
  readonly rcode: number;
  readonly rflags: string;
  /** The server block that produced it: its finish hooks run on a hit. */
  readonly owner: unknown;
}

export class AnswerCache {
  #entries = new Map<string, CachedAnswer>();
  #generation = 0;
  readonly capacity: number;
  hits = 0;
  misses = 0;

  constructor(capacity = 100_000) {
    this.capacity = capacity;
  }

  get generation(): number {
    return this.#generation;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** A live entry for the key, or undefined. */
  get(key: string, now: number): CachedAnswer | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) {
      this.misses++;
      return undefined;
    }
    if (e.expires <= now) {
      this.#entries.delete(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e;
  }

  /** Stores a reply computed under `generation`, unless the data changed meanwhile. */
  set(key: string, entry: CachedAnswer): void {
    if (entry.generation !== this.#generation) return;
    if (this.#entries.size >= this.capacity && !this.#entries.has(key)) {
      // Oldest first: a Map iterates in insertion order.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, entry);
  }

  invalidate(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** Approximate bytes held, for metrics. */
  bytes(): number {
    let n = 0;
    for (const [k, e] of this.#entries) n += k.length + e.bytes.length + 64;
    return n;
  }
}
