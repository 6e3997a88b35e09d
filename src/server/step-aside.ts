// The main thread steps aside during a watch storm (-workers N, N > 1). It is the one writer of the
// cluster index: it reads the watch and applies every event, and it answers UDP beside the workers. In
// a storm (10,000 EndpointSlice events a second) the applying fills its core, and the queries the
// kernel hands its sockets wait behind the events' slices and the collections their garbage brings:
// with one thread the storm's p99 was 4-8x the idle one. While the process has a backlog of watch
// events (runtime/watch-backlog.ts), the main thread's UDP sockets leave the port's group, so every
// query goes to the workers, who only read the index; they come back once the backlog has been
// applied for REJOIN_MS, so the bursts of one storm do not open and close them each second. Never
// while a worker is not listening: its sockets are the port then.

import type { Logger } from "pino";
import { watchBacklog } from "../runtime/watch-backlog.ts";
import { stepAsideStats } from "../metrics/server-stats.ts";

/** What the controller moves: the running instance's UDP sockets (Instance.stepAside). */
export interface Steps {
  stepAside(aside: boolean): Promise<boolean>;
}

export interface StepAsideOptions {
  /** The instance running now (a reload replaces it; what stepped aside moves with it). */
  current: () => Steps;
  /** Every worker thread listens. */
  workersReady: () => boolean;
  log: Logger;
  rejoinMs?: number;
  /** How often, while aside, the workers are checked on. */
  checkMs?: number;
}

/** The rest between two slices of a backlog while aside, ms. */
export const APPLY_REST_MS = 1;
/** How long the backlog must have been applied before the main thread answers again. */
export const REJOIN_MS = 1000;
const CHECK_MS = 100;

export class StepAside {
  readonly #o: StepAsideOptions;
  readonly #rejoinMs: number;
  /** Where the sockets should be: aside or not; `#moving` brings them there, one move at a time. */
  #wantAside = false;
  #aside = false;
  #moving: Promise<void> = Promise.resolve();
  #rejoin: NodeJS.Timeout | undefined;
  #check: NodeJS.Timeout | undefined;
  #since = 0;
  #stopped = false;

  constructor(o: StepAsideOptions) {
    this.#o = o;
    this.#rejoinMs = o.rejoinMs ?? REJOIN_MS;
  }

  /** Whether the main thread's UDP sockets are aside now. */
  get aside(): boolean {
    return this.#aside;
  }

  /** The process's watch backlog began (true) or was applied (false). */
  backlog(busy: boolean): void {
    if (this.#stopped) return;
    clearTimeout(this.#rejoin);
    this.#rejoin = undefined;
    if (busy) {
      if (this.#o.workersReady()) this.#want(true);
    } else if (this.#wantAside) {
      this.#rejoin = setTimeout(() => this.#want(false), this.#rejoinMs);
      this.#rejoin.unref();
    }
  }

  /** The process stops: no more moves (the workers answer through its lameduck either way). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#rejoin);
    clearInterval(this.#check);
  }

  #want(aside: boolean): void {
    this.#wantAside = aside;
    clearInterval(this.#check);
    this.#check = undefined;
    if (aside) {
      // A worker that dies takes its sockets with it: the main thread answers again at once.
      this.#check = setInterval(() => {
        if (!this.#o.workersReady() && !this.#stopped) this.#want(false);
      }, this.#o.checkMs ?? CHECK_MS);
      this.#check.unref();
    }
    this.#moving = this.#moving.then(() => this.#move());
  }

  async #move(): Promise<void> {
    const aside = this.#wantAside;
    if (aside === this.#aside) return;
    try {
      const moved = await this.#o.current().stepAside(aside);
      this.#aside = aside;
      // Aside, the writer keeps to about half a core (its slices are 1 ms): the workers answer on the
      // rest. With it running flat out, the storm's p99 at 10k services was 15-47 ms, resting 8-11.
      watchBacklog.restMs = aside && moved ? APPLY_REST_MS : 0;
      if (!moved) return;
      stepAsideStats.aside = aside ? 1 : 0;
      if (aside) {
        stepAsideStats.times++;
        this.#since = Date.now();
        this.#o.log.info(
          "watch backlog: the main thread applies it; its UDP sockets step aside for the workers",
        );
      } else
        this.#o.log.info(
          { asideMs: Date.now() - this.#since },
          "watch backlog applied: the main thread answers UDP again",
        );
    } catch (err) {
      // Not back on the port: tried again shortly (the workers answer meanwhile).
      this.#o.log.error({ err }, "step aside: cannot open the main thread's UDP sockets again; retrying");
      if (!aside) {
        const retry = setTimeout(() => this.#want(this.#wantAside), this.#rejoinMs);
        retry.unref();
      }
    }
  }
}
