// Groups error messages that match a pattern into one line per period ("3 errors like '...' occurred in
// last 30s"), so a flapping upstream does not flood the log.

import type { Logger } from "pino";

export type ConsolidateLevel = "warn" | "error" | "info" | "debug";

export interface Pattern {
  periodMs: number;
  re: RegExp;
  /** The expression as written in the Corefile, for the summary line. */
  source: string;
  level: ConsolidateLevel;
  /** CoreDNS's `show_first`: the first error of a period is logged at once (at `level`), and the
   * summary is written only when more followed it. */
  showFirst: boolean;
}

/** What take() did with a message: "counted" (say nothing now), "first" (a show_first pattern's first
 * of its period: log it at `level`), or undefined (no pattern took it: log it as usual). */
export type Taken = { kind: "counted" } | { kind: "first"; level: ConsolidateLevel } | undefined;

const COUNTED: Taken = { kind: "counted" };

interface Slot {
  count: number;
  timer: NodeJS.Timeout | undefined;
}

export class Consolidator {
  readonly #patterns: readonly Pattern[];
  readonly #slots: Slot[];
  readonly #log: Logger;
  #stopped = false;

  constructor(patterns: readonly Pattern[], log: Logger) {
    this.#patterns = patterns;
    this.#slots = patterns.map(() => ({ count: 0, timer: undefined }));
    this.#log = log;
  }

  /** Counts `message` against the first pattern it matches (none after stop): see Taken. */
  take(message: string): Taken {
    if (this.#stopped) return undefined;
    const i = this.#patterns.findIndex((p) => p.re.test(message));
    if (i < 0) return undefined;
    const slot = this.#slots[i];
    const p = this.#patterns[i];
    if (++slot.count > 1) return COUNTED;
    slot.timer = setTimeout(() => this.#flush(i), p.periodMs).unref();
    return p.showFirst ? { kind: "first", level: p.level } : COUNTED;
  }

  /** Writes what is pending and stops counting (at shutdown). */
  stop(): void {
    this.#stopped = true;
    for (let i = 0; i < this.#slots.length; i++) {
      clearTimeout(this.#slots[i].timer);
      this.#flush(i);
    }
  }

  #flush(i: number): void {
    const slot = this.#slots[i];
    const n = slot.count;
    slot.count = 0;
    slot.timer = undefined;
    const p = this.#patterns[i];
    // With show_first a lone error was logged already: a summary of one would repeat it.
    if (n === 0 || (n === 1 && p.showFirst)) return;
    this.#log[p.level](
      { count: n, pattern: p.source },
      `${n} errors like '${p.source}' occurred in last ${goDuration(p.periodMs)}`,
    );
  }
}

/** A duration as Go's time.Duration.String() prints it: "30s", "5m0s", "1h30m0s", "1.5s", "250ms". */
export function goDuration(ms: number): string {
  const ns = Math.round(ms * 1e6);
  if (ns === 0) return "0s";
  if (ns < 1000) return `${ns}ns`;
  if (ns < 1e6) return `${decimal(ns, 3)}µs`;
  if (ns < 1e9) return `${decimal(ns, 6)}ms`;
  const h = Math.floor(ns / 3.6e12);
  const m = Math.floor((ns % 3.6e12) / 6e10);
  const s = `${decimal(ns % 6e10, 9)}s`;
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}

/** `n / 10^digits` in decimal, without trailing zeros (exact: no floating point). */
function decimal(n: number, digits: number): string {
  const text = String(n).padStart(digits + 1, "0");
  const int = text.slice(0, -digits);
  const frac = text.slice(-digits).replace(/0+$/, "");
  return frac ? `${int}.${frac}` : int;
}
