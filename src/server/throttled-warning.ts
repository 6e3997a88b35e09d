// A warning that one client's queries can set off on every query: logged at most once per interval,
// with how many times it happened since the last line, so a client cannot flood the log with it.

import type { Logger } from "pino";

export class ThrottledWarning {
  readonly #log: Logger;
  readonly #msg: string;
  readonly #everyMs: number;
  #times = 0;
  #loggedAt = -Infinity;

  constructor(log: Logger, msg: string, everyMs: number) {
    this.#log = log;
    this.#msg = msg;
    this.#everyMs = everyMs;
  }

  /** It happened again: a line with `fields` and the count, unless one was logged within the interval. */
  hit(fields: Record<string, unknown>): void {
    this.#times++;
    const now = Date.now();
    if (now - this.#loggedAt < this.#everyMs) return;
    this.#log.warn({ ...fields, times: this.#times }, this.#msg);
    this.#times = 0;
    this.#loggedAt = now;
  }
}
