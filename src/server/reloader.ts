// Watches the Corefile for `reload`: every interval (+- jitter) it reads the file and the files it
// imports, and when their content changed it sets up a new Instance and lets it take over the running
// one. An invalid Corefile is logged and counted; the running configuration keeps serving. SIGUSR1
// reloads at once, changed or not.

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { parseCorefile } from "../corefile/parser.ts";
import { MAX_TIMER_MS } from "../corefile/args.ts";
import type { ServerBlock } from "../corefile/types.ts";
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
  /** The digest of what the running configuration was read from (SourceDigest). */
  digest: string;
  /** Everything Instance.create needs but the blocks. */
  instance: Omit<InstanceOptions, "blocks">;
  log: Logger;
  /** Called once a new configuration has the ports, before the old one retires (the worker threads
   * take it over meanwhile). */
  beforeRetire?: (next: Instance, text: string) => Promise<void>;
  /** Called once a new configuration has taken over. */
  onReloaded?: (next: Instance, text: string) => void;
}

/** Collects what a configuration is read from, the Corefile's text and each file it imports (by
 * name), into one SHA-512: an edit to an imported file is a change as much as one to the Corefile. */
export class SourceDigest {
  readonly #hash = createHash("sha512");

  constructor(text: string) {
    this.#hash.update(text);
  }

  /** For ParseOptions.imported. */
  readonly imported = (file: string, text: string): void => {
    this.#hash.update(`\0${file}\0${Buffer.byteLength(text)}\0`).update(text);
  };

  digest(): string {
    return this.#hash.digest("hex");
  }
}

/** The Corefile as a check found it: its blocks, or why it does not parse, and the digest of the
 * files read. */
interface Reading {
  text: string;
  digest: string;
  blocks?: ServerBlock[];
  error?: unknown;
}

export class Reloader {
  current: Instance;
  readonly #options: ReloaderOptions;
  #timer: NodeJS.Timeout | undefined;
  /** The check running now, so SIGUSR1 and the timer never overlap. */
  #busy: Promise<void> | undefined;
  #stopped = false;
  /** The digest of the files the serving configuration was read from. */
  #running: string;
  /** The digest last tried, so a rejected Corefile is reported once, not at every interval. */
  #tried = "";
  /** The take-over waiting for a new configuration to be ready: a newer Corefile aborts it. */
  #waiting: { digest: string; abort: AbortController } | undefined;
  /** A SIGUSR1 came while a check was setting up or retiring: it reloads once that one is done. */
  #again = false;

  constructor(current: Instance, o: ReloaderOptions) {
    this.current = current;
    this.#options = o;
    this.#running = o.digest;
    reloadStats.hash = sha512(o.text);
    this.#schedule();
  }

  /** Checks the files now; resolves once a reload, if any, is done. */
  check(): Promise<void> {
    return this.#start(false);
  }

  /** SIGUSR1: reads the Corefile and the files it imports and reloads, changed or not (what did not
   * change is taken over). */
  reloadNow(): Promise<void> {
    this.#options.log.info(
      { corefile: this.#options.file },
      "reload: SIGUSR1: reloading the Corefile and the files it imports, changed or not",
    );
    return this.#start(true);
  }

  #start(forced: boolean): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#busy !== undefined) {
      // The interval goes on through a long wait, so that a newer Corefile replaces it.
      this.#schedule();
      if (this.#waiting !== undefined) void this.#supersede(this.#waiting, forced);
      else this.#again ||= forced;
      return this.#busy;
    }
    this.#busy = this.#check(forced).finally(() => {
      this.#busy = undefined;
      this.#schedule();
      if (this.#again) {
        this.#again = false;
        void this.#start(true);
      }
    });
    return this.#busy;
  }

  /** While a take-over waits: files changed again end the wait, and the check after it applies the
   * newer ones (or keeps the running configuration, when the files went back to it). */
  async #supersede(w: { digest: string; abort: AbortController }, forced: boolean): Promise<void> {
    const read = await this.#read().catch(() => undefined);
    if (read === undefined || read.digest === w.digest || w.abort.signal.aborted) return;
    w.abort.abort();
    this.#tried = "";
    await this.#busy;
    void this.#start(forced);
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
    this.#timer = setTimeout(() => void this.check(), Math.min(delay, MAX_TIMER_MS));
    this.#timer.unref();
  }

  /** Reads and parses the Corefile, with the files it imports; rejects when it cannot be read. */
  async #read(): Promise<Reading> {
    const { file } = this.#options;
    const text = await readFile(file, "utf8");
    const sources = new SourceDigest(text);
    try {
      const blocks = parseCorefile(text, file, { imported: sources.imported });
      return { text, digest: sources.digest(), blocks };
    } catch (error) {
      return { text, digest: sources.digest(), error };
    }
  }

  async #check(forced: boolean): Promise<void> {
    const { file, log } = this.#options;
    let read: Reading;
    try {
      read = await this.#read();
    } catch (err) {
      reloadStats.failed++;
      log.error({ err, corefile: file }, "reload: cannot read the Corefile; the running configuration stays");
      return;
    }
    if (!forced && (read.digest === this.#running || read.digest === this.#tried)) return;
    this.#tried = read.digest;
    let next: Instance;
    const waiting = { digest: read.digest, abort: new AbortController() };
    let waitLog: NodeJS.Timeout | undefined;
    try {
      if (read.blocks === undefined) throw read.error;
      next = await Instance.create({
        ...this.#options.instance,
        blocks: read.blocks,
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
      const { beforeRetire } = this.#options;
      await next.takeOver(this.current, {
        readyWaitMs: READY_WAIT_MS,
        signal: waiting.abort.signal,
        beforeRetire: beforeRetire && (() => beforeRetire(next, read.text)),
      });
    } catch (err) {
      if (waiting.abort.signal.aborted) {
        log.info(
          { corefile: file },
          "reload: the Corefile changed again before the new configuration was ready; the waiting one is dropped and the files are checked again",
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
    this.#running = read.digest;
    reloadStats.hash = sha512(read.text);
    reloadStats.succeeded++;
    log.info({ corefile: file, ports: next.ports, adopted: next.adopted }, "reloaded");
    this.#options.onReloaded?.(next, read.text);
  }
}

function sha512(text: string): string {
  return createHash("sha512").update(text).digest("hex");
}
