// Where watch events wait between the socket and the store, so that applying them never holds up
// answering. A watch stream's bytes are queued as they arrive; the queue works through them in
// slices of at most `sliceMs` (the first at once when the queue was empty) and yields to the event
// loop between slices (setImmediate, which runs after the loop's poll phase: a batch of UDP queries is answered
// between two slices). The unit of work is one event, parsed and applied whole with the answer-store
// invalidations it causes, so a query sees the store before an event or after it, never halfway.
//
// Memory is bounded: past `maxBytes` queued, `full` turns true and the stream stops reading its
// socket until the queue is down to half (backpressure through TCP to the API server; nothing is
// dropped). Order is kept: one FIFO for every stream of a client, each stream's chunks in order.
//
// This is the boundary a writer thread would take over: producers hand it bytes, it applies them.

/** Work waiting in the queue: `step` does one unit (one event) and says whether it is done. */
export interface Work {
  /** What it holds, counted against maxBytes. */
  readonly bytes: number;
  /** Does one unit of the work; true once nothing is left of it. */
  step(): boolean;
}

export interface ApplyQueueOptions {
  /** The longest a slice runs before it yields, ms (default 1). One event that takes longer is
   * still applied whole. */
  sliceMs?: number;
  /** Bytes queued before producers are asked to stop reading (default 4 MiB: a few thousand events,
   * under a second of work). */
  maxBytes?: number;
  /** Clock (tests). */
  now?: () => number;
  /** How the next slice is scheduled (default setImmediate). */
  defer?: (fn: () => void) => void;
  /** How long to rest before the next slice of a backlog, ms, read at each slice (default 0: the
   * next turn of the loop). */
  restMs?: () => number;
  /** Told when work is left over after a slice (true: a backlog, a burst of events) and when the
   * backlog is all applied (false); once each way. A lone event applied at once is no backlog. */
  onBacklog?: (busy: boolean) => void;
}

export interface ApplyQueueStats {
  /** Work items and bytes waiting. */
  queued: number;
  bytes: number;
  /** Slices run, and the longest one, ms. */
  slices: number;
  longestSliceMs: number;
  /** Times the queue filled up and producers were asked to stop reading. */
  fulls: number;
}

export const DEFAULT_SLICE_MS = 1;
export const DEFAULT_MAX_BYTES = 4 * 2 ** 20;

export class ApplyQueue {
  readonly #sliceMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #defer: (fn: () => void) => void;
  readonly #onBacklog: ((busy: boolean) => void) | undefined;
  readonly #restMs: () => number;
  #backlog = false;
  /** FIFO: `#items` from `#head` on (shifting an array per item would be quadratic). */
  #items: Work[] = [];
  #head = 0;
  #bytes = 0;
  #scheduled = false;
  /** A slice is running (a step that pushes does not start another inside it). */
  #inSlice = false;
  #roomWaiters: (() => void)[] = [];
  #idleWaiters: (() => void)[] = [];
  #stats = { slices: 0, longestSliceMs: 0, fulls: 0 };
  /** Time applied since the event loop last came round to a deferred slice, ms: what work started
   * at once may still take in this turn of the loop. */
  #spent = 0;
  readonly #run = () => {
    this.#scheduled = false;
    this.#spent = 0;
    if (this.#head < this.#items.length) this.#slice();
  };

  constructor(o: ApplyQueueOptions = {}) {
    this.#sliceMs = o.sliceMs ?? DEFAULT_SLICE_MS;
    this.#maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#now = o.now ?? (() => performance.now());
    this.#defer = o.defer ?? setImmediate;
    this.#onBacklog = o.onBacklog;
    this.#restMs = o.restMs ?? (() => 0);
  }

  /** Past maxBytes: a producer should stop reading until whenRoom calls back. */
  get full(): boolean {
    return this.#bytes >= this.#maxBytes;
  }

  /** Queues work behind the work queued before it. Into an empty queue it starts at once, within
   * what is left of this turn's budget: a lone event is applied before the queries that came with it
   * are answered, as it would be without a queue, and only a burst waits for later slices. */
  push(work: Work): void {
    this.#items.push(work);
    this.#bytes += work.bytes;
    if (this.full && this.#roomWaiters.length === 0) this.#stats.fulls++;
    if (this.#items.length - this.#head === 1 && !this.#inSlice && this.#spent < this.#sliceMs) this.#slice();
    // Also after a slice run at once: the next turn of the loop resets the budget.
    this.#schedule();
  }

  /** Calls `fn` once the queue is down to half of maxBytes (at once if it already is). */
  whenRoom(fn: () => void): void {
    if (this.#bytes <= this.#maxBytes / 2) fn();
    else this.#roomWaiters.push(fn);
  }

  /** Resolves once everything queued so far (and since) is done. */
  idle(): Promise<void> {
    if (this.#head === this.#items.length) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Its source stopped: a backlog it reported ends here (what is left is still applied, as before). */
  stopped(): void {
    this.#backlogIs(false);
  }

  stats(): ApplyQueueStats {
    return { queued: this.#items.length - this.#head, bytes: this.#bytes, ...this.#stats };
  }

  #backlogIs(busy: boolean): void {
    if (busy === this.#backlog) return;
    this.#backlog = busy;
    this.#onBacklog?.(busy);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    const rest = this.#restMs();
    if (rest > 0 && this.#head < this.#items.length) setTimeout(this.#run, rest);
    else this.#defer(this.#run);
  }

  #slice(): void {
    const start = this.#now();
    const end = start + this.#sliceMs - this.#spent;
    const items = this.#items;
    this.#inSlice = true;
    do {
      const work = items[this.#head];
      let done = true;
      try {
        done = work.step();
      } catch {
        // A step reports its own failures (the watch ends with an error); one that throws anyway is
        // dropped rather than stopping every stream behind it.
      }
      if (done) {
        this.#head++;
        this.#bytes -= work.bytes;
      }
    } while (this.#head < items.length && this.#now() < end);
    this.#inSlice = false;
    const took = this.#now() - start;
    this.#spent += took;
    this.#stats.slices++;
    if (took > this.#stats.longestSliceMs) this.#stats.longestSliceMs = took;
    if (this.#head === items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > items.length) {
      this.#items = items.slice(this.#head);
      this.#head = 0;
    }
    if (this.#bytes <= this.#maxBytes / 2 && this.#roomWaiters.length > 0) {
      const waiters = this.#roomWaiters;
      this.#roomWaiters = [];
      for (const fn of waiters) fn();
    }
    this.#backlogIs(this.#head < this.#items.length);
    if (this.#head < this.#items.length) this.#schedule();
    else if (this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const fn of waiters) fn();
    }
  }
}
