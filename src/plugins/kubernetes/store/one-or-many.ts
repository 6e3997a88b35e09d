// A map from a key to a set of strings that keeps a lone string without an array around it: nearly
// every address is published by one service and nearly every service has one EndpointSlice, and an
// array per key costs about 80 bytes, times 280k addresses at 100k services.

export class OneOrMany<K> {
  readonly #m = new Map<K, string | string[]>();

  get size(): number {
    return this.#m.size;
  }

  /** The values under `k`, empty when none. */
  get(k: K): readonly string[] {
    const v = this.#m.get(k);
    if (v === undefined) return [];
    return typeof v === "string" ? [v] : v;
  }

  /** Adds `v` under `k`; true when `k` had no value before. */
  add(k: K, v: string): boolean {
    const cur = this.#m.get(k);
    if (cur === undefined) {
      this.#m.set(k, v);
      return true;
    }
    if (typeof cur === "string") {
      if (cur !== v) this.#m.set(k, [cur, v]);
    } else if (!cur.includes(v)) cur.push(v);
    return false;
  }

  /** Removes `v` from `k`; true when that left `k` without a value. */
  delete(k: K, v: string): boolean {
    const cur = this.#m.get(k);
    if (cur === undefined) return false;
    if (typeof cur === "string") {
      if (cur !== v) return false;
    } else {
      const rest = cur.filter((x) => x !== v);
      if (rest.length > 0) {
        this.#m.set(k, rest.length === 1 ? rest[0] : rest);
        return false;
      }
    }
    this.#m.delete(k);
    return true;
  }

  /** A rough estimate of the heap it takes, given what a key takes. */
  bytes(keyBytes: (k: K) => number): number {
    let b = 0;
    for (const [k, v] of this.#m) b += 40 + keyBytes(k) + (typeof v === "string" ? 0 : 16 * v.length);
    return b;
  }
}
