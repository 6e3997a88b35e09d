// Jittered exponential backoff for retrying the API: "equal jitter" (half the step fixed, half random)
// so retries of many reflectors spread out yet never collapse to zero, capped, and reset once the
// connection has been healthy for a while (as client-go's backoff manager does).
//
// The cap is 4 s where client-go's is 30 s: the wait after the API comes back is at most the cap, and
// DNS answers must be fresh again within 5 s of that. A handful of DNS replicas asking once every 2-4 s
// per resource is nothing to an API server, even a struggling one.

export interface BackoffOptions {
  /** First delay, in ms (default 250). */
  initialMs?: number;
  /** Largest delay, in ms (default 4000). */
  maxMs?: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** With no failure for this long after the last retry, the next delay starts over (default 60 000). */
  resetAfterMs?: number;
  /** Injected for tests. */
  random?: () => number;
  now?: () => number;
}

export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly factor: number;
  readonly resetAfterMs: number;
  readonly #random: () => number;
  readonly #now: () => number;
  #step = 0;
  /** When the last retry was due (failure time + its delay). */
  #retryAt = -Infinity;

  constructor(o: BackoffOptions = {}) {
    this.initialMs = o.initialMs ?? 250;
    this.maxMs = o.maxMs ?? 4000;
    this.factor = o.factor ?? 2;
    this.resetAfterMs = o.resetAfterMs ?? 60_000;
    this.#random = o.random ?? Math.random;
    this.#now = o.now ?? Date.now;
    if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs) || !(this.factor >= 1)) {
      throw new RangeError(`backoff: need 0 < initialMs <= maxMs and factor >= 1`);
    }
  }

  /** Records a failure and returns how long to wait before the next attempt, in ms. */
  next(): number {
    const now = this.#now();
    if (now - this.#retryAt >= this.resetAfterMs) this.#step = 0;
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.#step);
    if (base < this.maxMs) this.#step++;
    const delay = Math.round(base / 2 + (this.#random() * base) / 2);
    this.#retryAt = now + delay;
    return delay;
  }

  /** Forgets past failures: the next delay is the initial one again. */
  reset(): void {
    this.#step = 0;
    this.#retryAt = -Infinity;
  }
}
