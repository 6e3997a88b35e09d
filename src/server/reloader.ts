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
 * takes over anyway. */
const READY_WAIT_MS = 5000;

export interface ReloaderOptions {
  file: string;
  text: string;
  /** Everything Instance.create needs but the blocks. */
  instance: Omit<InstanceOptions, "blocks">;
  log: Logger;
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

  constructor(current: Instance, o: ReloaderOptions) {
    this.current = current;
    this.#options = o;
    reloadStats.hash = sha512(o.text);
    this.#schedule();
  }

  /** Checks the file now; resolves once a reload, if any, is done. */
  check(): Promise<void> {
    this.#busy ??= this.#check().finally(() => {
      this.#busy = undefined;
      this.#schedule();
    });
    return this.#busy;
  }

  /** Stops watching; resolves once a reload in progress is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
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
    try {
      next = await Instance.create({
        ...this.#options.instance,
        blocks: parseCorefile(text, file),
        takesOver: true,
      });
      await next.takeOver(this.current, READY_WAIT_MS);
    } catch (err) {
      reloadStats.failed++;
      log.error(
        { corefile: file, error: (err as Error).message },
        "reload: the new Corefile was rejected; the running configuration stays",
      );
      return;
    }
    this.current = next;
    reloadStats.hash = hash;
    reloadStats.succeeded++;
    log.info({ corefile: file, ports: next.ports }, "reloaded");
  }
}

function sha512(text: string): string {
  return createHash("sha512").update(text).digest("hex");
}
