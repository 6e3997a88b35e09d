// Watches the Corefile for `reload`: every interval (+- jitter) it hashes the file, and when the content
// changed it parses and sets up a new Instance and lets it take over the running one. An invalid
// Corefile is logged and counted; the running configuration keeps serving. SIGUSR1 checks at once.

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { parseCorefile } from "../corefile/parser.ts";
import { Instance, type InstanceOptions } from "./instance.ts";
import { reloadStats } from "../metrics/server-stats.ts";

/** How long a new configuration may take to become ready (a kubernetes store to sync) before it
 * takes over anyway, when the running one is not ready either. While the running one is ready it
 * serves until the new one is, however long that takes (a newer Corefile replaces the wait). */
export const READY_WAIT_MS = 5000;
/** How often a long wait for the new configuration is logged. */
const WAIT_LOG_MS = 10_000;

export interface ReloaderOptions {
  file: string;
  text: string;
  /** Everything Instance.create needs but the blocks. */
  instance: Omit<InstanceOptions, "blocks">;
  log: Logger;
  /** Called once a new configuration has taken over (the worker threads follow it). */
  onReloaded?: (next: Instance, text: string) => void;
}

export class Reloader {
  current: Instance;
  readonly #options: ReloaderOptions;
  #timer: NodeJS.Timeout | undefined;
  /** The check running now, so SIGUSR1 and the timer never overlap. */
  #busy: Promise<void> | undefined;
  #stopped = false;
  /** The hash last tried, so a rejected Corefile is reported once, not at every interval. */
  #tried = "";
  /** The take-over waiting for a new configuration to be ready: a newer Corefile aborts it. */
  #waiting: { hash: string; abort: AbortController } | undefined;

  constructor(current: Instance, o: ReloaderOptions) {
    this.current = current;
    this.#options = o;
    reloadStats.hash = sha512(o.text);
    this.#schedule();
  }

  /** Checks the file now; resolves once a reload, if any, is done. */
  check(): Promise<void> {
    if (this.#busy !== undefined) {
      if (this.#waiting !== undefined) void this.#supersede(this.#waiting);
      return this.#busy;
    }
    this.#busy = this.#check().finally(() => {
      this.#busy = undefined;
      this.#schedule();
    });
    return this.#busy;
  }

  /** While a take-over waits: a Corefile changed again ends the wait, and the check after it applies
   * the newer one (or keeps the running one, when the file went back to it). */
  async #supersede(w: { hash: string; abort: AbortController }): Promise<void> {
    const text = await readFile(this.#options.file, "utf8").catch(() => undefined);
    if (text === undefined || sha512(text) === w.hash || w.abort.signal.aborted) return;
    w.abort.abort();
    this.#tried = "";
    await this.#busy;
    void this.check();
  }

  /** Stops watching; resolves once a reload in progress is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#waiting?.abort.abort();
    await this.#busy;
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    const r = this.current.reload;
    if (this.#stopped || r === undefined) return;
    const delay = r.intervalMs + (Math.random() * 2 - 1) * r.jitterMs;
    this.#timer = setTimeout(() => void this.check(), delay);
    this.#timer.unref();
  }

  async #check(): Promise<void> {
    const { file, log } = this.#options;
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      reloadStats.failed++;
      log.error({ err, corefile: file }, "reload: cannot read the Corefile; the running configuration stays");
      return;
    }
    const hash = sha512(text);
    if (hash === reloadStats.hash || hash === this.#tried) return;
    this.#tried = hash;
    let next: Instance;
    const waiting = { hash, abort: new AbortController() };
    let waitLog: NodeJS.Timeout | undefined;
    try {
      next = await Instance.create({
        ...this.#options.instance,
        blocks: parseCorefile(text, file),
        takesOver: true,
        previous: this.current,
      });
      // The interval keeps checking while the new configuration gets ready: an edit replaces it.
      this.#waiting = waiting;
      this.#schedule();
      waitLog = setInterval(
        () =>
          log.warn(
            { corefile: file },
            "reload: waiting for the new configuration to be ready (its kubernetes store to sync); the running one serves meanwhile",
          ),
        WAIT_LOG_MS,
      );
      await next.takeOver(this.current, { readyWaitMs: READY_WAIT_MS, signal: waiting.abort.signal });
    } catch (err) {
      if (waiting.abort.signal.aborted) {
        log.info(
          { corefile: file },
          "reload: the Corefile changed again before the new configuration was ready; the newer one is tried",
        );
        return;
      }
      reloadStats.failed++;
      log.error(
        { corefile: file, error: (err as Error).message },
        "reload: the new Corefile was rejected; the running configuration stays",
      );
      return;
    } finally {
      clearInterval(waitLog);
      this.#waiting = undefined;
    }
    this.current = next;
    reloadStats.hash = hash;
    reloadStats.succeeded++;
    log.info({ corefile: file, ports: next.ports, adopted: next.adopted }, "reloaded");
    this.#options.onReloaded?.(next, text);
  }
}

function sha512(text: string): string {
  return createHash("sha512").update(text).digest("hex");
}
