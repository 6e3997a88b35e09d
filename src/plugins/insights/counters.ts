// Counters per row (workload), kept as running totals in one typed array, with copies of the totals
// taken on a timer so that any window reads as "now minus the copy from then". Three ladders of
// fixed rings: every 10 s for the last minute, every minute for the last 10, every 10 minutes for
// the last hour: 26 copies of the totals, whatever the traffic. A query bumps numbers in place.

/** What is counted per row. */
export const C = {
  QUERIES: 0,
  NOERROR: 1,
  NXDOMAIN: 2,
  SERVFAIL: 3,
  REFUSED: 4,
  OTHER_RCODE: 5,
  CACHE_HITS: 6,
  /** NXDOMAIN queries of search-list walks that ended in the name as asked (or a later domain). */
  WASTED: 7,
  /** The part of WASTED that `ndots:2` would have saved (the name had 2 dots or more and was found
   * outside the cluster zone). */
  WASTED_NDOTS2: 8,
  /** The part of WASTED that `autopath` would have saved (the client was a pod it knows). */
  WASTED_AUTOPATH: 9,
  /** Search-list walks seen to their end. */
  WALKS: 10,
} as const;
export const COUNTERS = 11;

/** The windows, by name: the ring they read and how many of its steps back they reach. */
export const WINDOWS = {
  "1m": { ring: 0, steps: 6 },
  "10m": { ring: 1, steps: 10 },
  "1h": { ring: 2, steps: 6 },
} as const;
export type WindowName = keyof typeof WINDOWS;
const RINGS = [
  { periodS: 10, length: 7 },
  { periodS: 60, length: 11 },
  { periodS: 600, length: 7 },
];

export class Counters {
  readonly rows: number;
  /** Running totals, row * COUNTERS + counter. Uint32: a window is a difference mod 2^32. */
  readonly totals: Uint32Array;
  readonly #rings: Uint32Array[];
  /** Per ring: the next copy's place, and how many copies it has taken. */
  readonly #at = new Int32Array(RINGS.length);
  readonly #taken = new Float64Array(RINGS.length);

  /** With `windows` false (a worker thread, which posts its totals and starts again) no copies. */
  constructor(rows: number, windows = true) {
    this.rows = rows;
    this.totals = new Uint32Array(rows * COUNTERS);
    this.#rings = windows ? RINGS.map((r) => new Uint32Array(r.length * rows * COUNTERS)) : [];
  }

  /** Called every 10 s: copies the totals into each ring whose period has come. */
  step(tick: number): void {
    for (let r = 0; r < this.#rings.length; r++) {
      if (tick % (RINGS[r].periodS / 10) !== 0) continue;
      this.#rings[r].set(this.totals, this.#at[r] * this.totals.length);
      this.#at[r] = (this.#at[r] + 1) % RINGS[r].length;
      this.#taken[r]++;
    }
  }

  /** Counter `c` of `row` over the window: totals minus the copy `steps` periods ago (or since start
   * when the process is younger). */
  window(row: number, c: number, w: WindowName): number {
    const { ring, steps } = WINDOWS[w];
    const i = row * COUNTERS + c;
    if (this.#taken[ring] <= steps) return this.totals[i];
    const len = RINGS[ring].length;
    const place = (this.#at[ring] - 1 - steps + 2 * len) % len;
    return (this.totals[i] - this.#rings[ring][place * this.totals.length + i]) >>> 0;
  }

  get bytes(): number {
    return this.totals.byteLength + this.#rings.reduce((n, r) => n + r.byteLength, 0);
  }
}

/** Per-second totals for the whole server over the last hour (the page's chart and the ratios). */
export const S = { QUERIES: 0, NXDOMAIN: 1, SERVFAIL: 2, CACHE_HITS: 3, WASTED: 4 } as const;
export const SERIES = 5;
const SECONDS = 3600;

export class Seconds {
  readonly #ring = new Uint32Array(SECONDS * SERIES);
  /** The second being counted (since the epoch), and its place. */
  #second = 0;

  /** Moves to `second`, zeroing the seconds skipped. */
  advance(second: number): void {
    if (this.#second === 0) this.#second = second;
    const gap = Math.min(second - this.#second, SECONDS);
    for (let k = 1; k <= gap; k++) {
      const at = ((this.#second + k) % SECONDS) * SERIES;
      this.#ring.fill(0, at, at + SERIES);
    }
    if (second > this.#second) this.#second = second;
  }

  add(series: number, n = 1): void {
    this.#ring[(this.#second % SECONDS) * SERIES + series] += n;
  }

  /** The last `n` whole seconds of `series`, oldest first (the current second is left out). */
  last(series: number, n: number): number[] {
    const out: number[] = [];
    for (let k = n; k >= 1; k--)
      out.push(this.#ring[((this.#second - k + SECONDS) % SECONDS) * SERIES + series]);
    return out;
  }

  /** The sum of the last `n` whole seconds of `series`. */
  sum(series: number, n: number): number {
    let t = 0;
    for (const v of this.last(series, Math.min(n, SECONDS - 1))) t += v;
    return t;
  }
}
