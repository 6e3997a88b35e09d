// Client-side limits on the requests to the Kubernetes API, CoreDNS's `apiserver_qps`,
// `apiserver_burst` and `apiserver_max_inflight`: a token bucket that every request (each LIST page,
// each watch started, discovery) takes a token from, as client-go's rate limiter does, and a bound on
// the short requests (LIST, discovery) in flight at once. Watches stay open for minutes and are not
// counted against that bound, as kube-apiserver's own --max-requests-inflight leaves them out: counting
// them would let a few watches hold every slot for good.

import { KubeError, KubeErrorCode } from "./api.ts";
import type { ApiClient, ListPage, Query } from "./api.ts";

export interface ApiLimits {
  /** Requests per second the bucket refills with; with burst, the rate limit. */
  qps?: number;
  /** Requests the bucket holds: how many may go at once after a quiet spell. */
  burst?: number;
  /** LIST and discovery requests in flight at once. */
  maxInflight?: number;
}

/** client-go's defaults, used for the one of qps and burst that is not given. */
export const DEFAULT_QPS = 5;
export const DEFAULT_BURST = 10;

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(aborted());
      const onAbort = () => {
        clearTimeout(t);
        reject(aborted());
      };
      // Unref'd: a request waiting for its turn must not keep a stopping process alive.
      const t = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      t.unref();
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

function aborted(): KubeError {
  return new KubeError(
    KubeErrorCode.TRANSPORT,
    "request aborted while waiting for its turn (apiserver limits)",
  );
}

/** A token bucket: `burst` tokens, refilled at `qps` per second; take() waits for one. Tokens are
 * handed out in the order asked for: each taker reserves the next one, so none starves. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #at: number;

  constructor(qps: number, burst: number, clock: Clock = realClock) {
    this.#qps = qps;
    this.#burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#at = clock.now();
  }

  /** Resolves when a token is this caller's; rejects (KubeError TRANSPORT) if `signal` aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) * this.#qps) / 1000);
    this.#at = now;
    // The token is reserved now (the count may go below zero): later callers queue behind it.
    this.#tokens -= 1;
    if (this.#tokens >= 0) return;
    const waitMs = (-this.#tokens * 1000) / this.#qps;
    try {
      await this.#clock.sleep(waitMs, signal);
    } catch (err) {
      this.#tokens += 1;
      throw err;
    }
  }
}

/** At most `max` holders at once; the others wait in order. */
export class Slots {
  readonly #max: number;
  #held = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  get held(): number {
    return this.#held;
  }

  /** Resolves with a release function once a slot is this caller's. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.#held >= this.#max) {
      await new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(aborted());
        const turn = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.#waiting.indexOf(turn);
          if (i >= 0) this.#waiting.splice(i, 1);
          reject(aborted());
        };
        this.#waiting.push(turn);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } else this.#held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter; only when none waits is it given back.
      if (next) next();
      else this.#held--;
    };
  }
}

/** `inner` with the limits applied; `inner` itself when none is set. */
export function limitClient(inner: ApiClient, limits: ApiLimits, clock: Clock = realClock): ApiClient {
  const rated = limits.qps !== undefined || limits.burst !== undefined;
  if (!rated && limits.maxInflight === undefined) return inner;
  const bucket = rated
    ? new TokenBucket(limits.qps ?? DEFAULT_QPS, limits.burst ?? DEFAULT_BURST, clock)
    : undefined;
  const slots = limits.maxInflight !== undefined ? new Slots(limits.maxInflight) : undefined;

  async function short<T>(signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    await bucket?.take(signal);
    const release = await slots?.acquire(signal);
    try {
      return await run();
    } finally {
      release?.();
    }
  }

  return {
    server: inner.server,
    list(path: string, query: Query, signal: AbortSignal): Promise<ListPage> {
      return short(signal, () => inner.list(path, query, signal));
    },
    serves(groupVersion: string, resource: string, signal: AbortSignal): Promise<boolean> {
      return short(signal, () => inner.serves(groupVersion, resource, signal));
    },
    async watch(path, query, onEvent, onDone, inactivityMs) {
      await bucket?.take();
      return inner.watch(path, query, onEvent, onDone, inactivityMs);
    },
  };
}
