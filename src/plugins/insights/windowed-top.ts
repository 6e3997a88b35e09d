// A top list over the windows of 1 minute, 10 minutes and 1 hour, in fixed memory. The hook counts
// into one live sketch (with its doorkeeper); every 10 s the timer moves the live sketch's entries
// into three rings of sketches, one per window, on the same steps as the counters (counters.ts):
// 6 of 10 s for the minute, 11 of a minute for 10 minutes, 7 of 10 minutes for the hour. The ring's
// newest sketch takes 10 s steps until its period ends, then the oldest is emptied and becomes the
// newest. A read merges the live sketch and the window's ring, summing each key's count and error.
// Merged space-saving summaries keep the guarantee with the errors added up (Agarwal et al.,
// "Mergeable summaries", 2012): what shows as certain (count - error) is never more than the truth.

import type { NameEntries, NameTop, TextEntries, TextTop } from "./names.ts";
import type { TopEntry } from "./space-saving.ts";
import type { WindowName } from "./counters.ts";

/** Per window: sketches in its ring, and how many 10 s steps each takes before the next begins. */
const RINGS: Record<WindowName, { length: number; steps: number }> = {
  "1m": { length: 6, steps: 1 },
  "10m": { length: 11, steps: 6 },
  "1h": { length: 7, steps: 60 },
};

type Sketch = NameTop | TextTop;
type EntriesOf<T> = T extends NameTop ? NameEntries : TextEntries;

interface Ring<T> {
  sketches: T[];
  /** The newest sketch's place. */
  at: number;
  steps: number;
}

export class WindowedTop<T extends Sketch> {
  /** What the hook counts into (and a worker's delta is merged into). */
  readonly live: T;
  readonly #rings: Record<WindowName, Ring<T>> | undefined;
  readonly #id: (entry: TopEntry<unknown>) => string;

  /** `make(doorkeeper)` builds one sketch; with `windows` false (a worker thread, which only posts
   * its live sketch) there are no rings. */
  constructor(make: (doorkeeper: boolean) => T, id: (entry: TopEntry<unknown>) => string, windows = true) {
    this.live = make(true);
    this.#id = id;
    if (!windows) return;
    const ring = (w: WindowName): Ring<T> => ({
      // Merged entries were admitted already: no doorkeeper in the rings.
      sketches: Array.from({ length: RINGS[w].length }, () => make(false)),
      at: 0,
      steps: RINGS[w].steps,
    });
    this.#rings = { "1m": ring("1m"), "10m": ring("10m"), "1h": ring("1h") };
  }

  /** Every 10 s (`tick` counts them): the live sketch's entries go into each ring's newest sketch,
   * after the rings whose period ended moved on. */
  step(tick: number): void {
    const rings = this.#rings;
    if (rings === undefined) return;
    const e = this.live.entries() as EntriesOf<T>;
    this.live.clear(true);
    for (const r of Object.values(rings)) {
      if (tick % r.steps === 0) {
        r.at = (r.at + 1) % r.sketches.length;
        r.sketches[r.at].clear();
      }
      (r.sketches[r.at] as { merge(e: EntriesOf<T>): void }).merge(e);
    }
  }

  /** The top `n` over `window`, largest certain count first. */
  read(window: WindowName, n: number): TopEntry<ReturnType<T["top"]>[number]["key"]>[] {
    type K = ReturnType<T["top"]>[number]["key"];
    const by = new Map<string, TopEntry<K>>();
    const all = [this.live, ...(this.#rings?.[window].sketches ?? [])];
    for (const s of all) {
      for (const e of s.top(s.capacity) as TopEntry<K>[]) {
        const k = this.#id(e);
        const had = by.get(k);
        if (had === undefined) by.set(k, e);
        else {
          had.count += e.count;
          had.error += e.error;
        }
      }
    }
    return [...by.values()].sort((x, y) => y.count - y.error - (x.count - x.error)).slice(0, n);
  }

  get bytes(): number {
    const rings = this.#rings === undefined ? [] : Object.values(this.#rings);
    return rings.reduce((b, r) => b + r.sketches.reduce((s, k) => s + k.bytes, 0), this.live.bytes);
  }
}
