// The answers that a run of store changes altered, collected until the store hands them to the answer
// cache (after each watch event, and at the end of each list, whose objects are batched). Past a bound
// the list stops growing and becomes "all": one full invalidation is cheaper than a huge list.

export class PendingChanges {
  readonly #zones: readonly string[];
  readonly #forward: readonly string[];
  readonly #max: number;
  #names = new Set<string>();
  #all = false;

  /** `zones`: the stanza's zones (canonical); `forward`: those that turn relative names into owner
   * names. */
  constructor(zones: readonly string[], forward: readonly string[], maxNames: number) {
    this.#zones = zones;
    this.#forward = forward;
    this.#max = maxNames;
  }

  /** Adds changed names: `relative` under every forward zone, `absolute` as they are. */
  add(relative: readonly string[], absolute: readonly string[]): void {
    if (this.#all) return;
    for (const zone of this.#forward) for (const r of relative) this.#names.add(joinZone(r, zone));
    for (const a of absolute) this.#names.add(a);
    if (this.#names.size > this.#max) this.all();
  }

  all(): void {
    this.#all = true;
    this.#names.clear();
  }

  /** What changed since the last take: the names (with the apex names, whose SOA serial changed),
   * "all", or undefined for nothing. */
  take(): readonly string[] | "all" | undefined {
    if (!this.#all && this.#names.size === 0) return undefined;
    const out = this.#all ? "all" : [...this.#names, ...this.#zones];
    this.#names = new Set();
    this.#all = false;
    return out;
  }
}

function joinZone(relative: string, zone: string): string {
  if (relative === "") return zone;
  return zone === "." ? `${relative}.` : `${relative}.${zone}`;
}
