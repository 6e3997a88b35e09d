// The process's memory budget: below the pod's limit, so that hostile traffic makes the server shed
// what it can rebuild instead of being OOM-killed (issue 33: one client took RSS from 137 to 262 MiB,
// over the Deployment's 256Mi limit, while the answer store kept to its own 64 MiB).
//
// The budget is `-memory.budget MiB`, else BUDGET_SHARE of the cgroup's limit (memory.max, cgroup v2;
// memory.limit_in_bytes, v1), else none. Once a second the resident size is read; over the budget the
// server sheds: every answer store drops its entries (their octets go back to the allocator as the
// store compacts), and while it stays over, replies larger than BIG_REPLY_OCTETS that took the chain
// (a large forward, a big TCP reply) are answered REFUSED and not stored. Below SHED_END of the budget
// it stops. Each change is a log line; the budget and the state are metrics.

import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { memoryStats } from "../metrics/server-stats.ts";

/** The share of the cgroup's limit the budget is by default: room above it for what the collector has
 * not yet given back and for the kernel's own accounting of the pod. */
export const BUDGET_SHARE = 0.75;
/** Shedding stops below this share of the budget. */
const SHED_END = 0.9;
const CHECK_MS = 1000;

/** The cgroup's memory limit of this process in bytes, or undefined when there is none. */
export function cgroupLimit(
  read: (path: string) => string = (p) => readFileSync(p, "utf8"),
): number | undefined {
  for (const path of ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]) {
    let text: string;
    try {
      text = read(path).trim();
    } catch {
      continue;
    }
    // "max" (v2) or a page-rounded 2^63 (v1) is no limit.
    if (!/^\d+$/.test(text) || Number(text) >= 2 ** 60) return undefined;
    return Number(text);
  }
  return undefined;
}

export class MemoryBudget {
  /** Bytes of resident memory allowed; 0 for none. */
  budget = 0;
  /** Over the budget (until below SHED_END of it): large replies are refused. */
  shedding = false;
  readonly #sheds = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;
  #log: Logger | undefined;
  #rss: () => number = () => process.memoryUsage.rss();

  /** Checks every second against `budget` bytes (0: nothing to do); `rss` is injected by tests. */
  start(budget: number, log: Logger, rss?: () => number): void {
    this.stop();
    this.budget = budget;
    this.#log = log;
    if (rss !== undefined) this.#rss = rss;
    memoryStats.budget = budget;
    if (budget > 0) this.#timer = setInterval(() => this.check(), CHECK_MS).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Registers what drops caches when the process is over its budget; the returned function removes it. */
  onShed(drop: () => void): () => void {
    this.#sheds.add(drop);
    return () => this.#sheds.delete(drop);
  }

  /** Compares the resident size with the budget, and sheds when it is over. */
  check(): void {
    if (this.budget === 0) return;
    const rss = this.#rss();
    const mib = (n: number) => Math.round(n / 1048576);
    if (rss > this.budget) {
      if (!this.shedding) {
        this.shedding = true;
        memoryStats.shedding = 1;
        this.#log?.warn(
          { rssMiB: mib(rss), budgetMiB: mib(this.budget) },
          "memory over budget: dropping cached answers and refusing large replies",
        );
      }
      // Every second it stays over: what was cached since goes too.
      memoryStats.sheds++;
      for (const drop of this.#sheds) drop();
    } else if (this.shedding && rss < this.budget * SHED_END) {
      this.shedding = false;
      memoryStats.shedding = 0;
      this.#log?.info({ rssMiB: mib(rss), budgetMiB: mib(this.budget) }, "memory back under budget");
    }
  }
}

/** The process's one budget (the pipelines of every configuration a reload makes share it). */
export const memoryBudget = new MemoryBudget();
