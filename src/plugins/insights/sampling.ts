// Which queries the top lists count. Per-workload counters and search-list walks see every query;
// the top lists (names, NXDOMAIN names, clients) are what costs most per query, and at a high rate a
// random sample ranks the same heavy hitters: above RATE queries a second, 1 query in `every` is
// counted, weighted by `every`, with `every` the power of two that brings the last second's queries
// near RATE. Random, not every n-th: clients that take turns (a load generator's round robin, pods
// in lockstep) would otherwise fall in or out of the sample as a whole.

/** Queries a second the top lists count in full; above it they count a sample about this large. */
export const RATE = 4096;
/** The sparsest sample: 1 in 64 (at 260k QPS still 4,000 counted a second). */
const MOST = 64;

export class Sampling {
  /** Counted 1 in `every` (a power of two); 1 below RATE. */
  every = 1;
  #mask = 0;
  /** xorshift32 state: any non-zero start. */
  #x = 0x9e3779b9 | 0;

  /** Sets the rate from the queries of the last whole second. */
  adapt(lastSecond: number): void {
    let every = 1;
    while (every < MOST && lastSecond > RATE * every) every *= 2;
    this.every = every;
    this.#mask = every - 1;
  }

  /** Whether this query goes into the top lists (with weight `every`). */
  take(): boolean {
    if (this.#mask === 0) return true;
    let x = this.#x;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#x = x;
    return (x & this.#mask) === 0;
  }
}
