// The answers that a run of store changes altered, collected until the store hands them to the answer
// cache (after each watch event, and at the end of each list, whose objects are batched). Past a bound
// the list stops growing and becomes "all": one full invalidation is cheaper than a huge list. It
// keeps the time of the last change too, the apexes' SOA serial (change-clock.ts).

import { ChangeClock } from "./change-clock.ts";

/** Another set of zones the store's records are published under, by another plugin (k8s_external
 * publishes `svc.ns.<its zone>` for the store's `svc.ns.svc`): a change to the store's names changes
 * the view's names too. */
export interface NameView {
  /** The zones the view's relative names are under. */
  readonly zones: readonly string[];
  /** Names every change touches (the view's apexes, whose SOA serial is the time of the last change). */
  readonly apexes: readonly string[];
  /** The view's name (relative to its zones) for one of the store's relative names, or undefined. */
  map(relative: string): string | undefined;
}

export class PendingChanges {
  readonly #zones: string[];
  readonly #views: NameView[] = [];
  readonly #forward: readonly string[];
  readonly #max: number;
  #names = new Set<string>();
  #all = false;
  /** The serial moved on with no name changed (change-clock.ts): the apexes' answers changed. */
  #apexes = false;
  /** The time of the last change: the SOA serial. */
  readonly clock: ChangeClock;

  /** `zones`: the stanza's zones (canonical); `forward`: those that turn relative names into owner
   * names. */
  constructor(zones: readonly string[], forward: readonly string[], maxNames: number, moved: () => void) {
    this.#zones = [...zones];
    this.#forward = forward;
    this.#max = maxNames;
    // `moved`: the serial moved on alone, and a take now holds the apexes.
    this.clock = new ChangeClock(() => {
      this.#apexes = true;
      moved();
    });
  }

  /** Adds a view: its names change with the store's, and its apexes (SOA serial) with every change. */
  addView(view: NameView): void {
    this.#views.push(view);
    this.#zones.push(...view.apexes.filter((z) => !this.#zones.includes(z)));
  }

  /** Adds changed names: `relative` under every forward zone, `absolute` as they are. */
  add(relative: readonly string[], absolute: readonly string[]): void {
    if (this.#all) return;
    for (const zone of this.#forward) for (const r of relative) this.#names.add(joinZone(r, zone));
    for (const v of this.#views) {
      for (const r of relative) {
        const m = v.map(r);
        if (m !== undefined) for (const zone of v.zones) this.#names.add(joinZone(m, zone));
      }
    }
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
    if (!this.#all && this.#names.size === 0 && !this.#apexes) return undefined;
    const out = this.#all ? "all" : [...this.#names, ...this.#zones];
    this.#names = new Set();
    this.#all = false;
    this.#apexes = false;
    return out;
  }
}

function joinZone(relative: string, zone: string): string {
  if (relative === "") return zone;
  return zone === "." ? `${relative}.` : `${relative}.${zone}`;
}
