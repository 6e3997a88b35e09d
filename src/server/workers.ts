// -workers N: N-1 worker threads answer beside the main thread (src/worker.ts is their entry). The
// main thread sets up the Corefile as always (its DNS sockets, TCP, the HTTP listeners, the one
// Kubernetes watch); each worker sets it up again with UDP sockets of its own in the same SO_REUSEPORT
// group, so the kernel spreads the clients over the threads. The pool starts them, tells them where
// to listen and what to reload, gathers their metrics, stops them with the process, and starts again
// one that died (its sockets left the group as it died: the others answer meanwhile).

import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { MetricObjectWithValues, MetricValue } from "prom-client";
import type { UdpEngineName } from "../cli-flags.ts";
import { SharedIndex } from "../offheap/shared-index.ts";
import { relay } from "../runtime/relay.ts";
import type { StampRecord } from "../setup/file-stamps.ts";

/** What a worker starts with (workerData). */
export interface WorkerData {
  index: number;
  text: string;
  /** The file stamps the main thread's set-up of `text` read (setup/file-stamps.ts). */
  fileStamps: StampRecord;
  /** The Corefile's path (for file:line in errors), and the folder relative paths resolve against. */
  file: string;
  root: string;
  defaultPort: number;
  udpEngine: UdpEngineName;
}

/** The main thread's messages to a worker (beside the relay's). */
export type ToWorker =
  | { t: "listen"; ports: Record<string, number> }
  | { t: "reload"; text: string; fileStamps: StampRecord; ports: Record<string, number> }
  | { t: "shed" }
  | { t: "stop" }
  | { t: "metrics"; id: number };

type Metrics = MetricObjectWithValues<MetricValue<string>>[];
type FromWorker =
  | { t: "listening" | "stopped" | "reloaded" }
  | { t: "failed"; message: string }
  | { t: "metrics"; id: number; json: Metrics };

/** A scrape waits this long for a worker's share; one that does not answer is left out of it. */
const SCRAPE_WAIT_MS = 2000;
/** The first restart of a worker that died comes after this long, doubling up to RESTART_MAX_MS. */
const RESTART_MS = 500;
const RESTART_MAX_MS = 30_000;

interface Slot {
  worker: Worker;
  listening: boolean;
  restartMs: number;
  /** Settles the reload this worker is doing (it reported, or exited). */
  reloaded: () => void;
}

export interface PoolOptions {
  /** Worker threads to start: -workers N less the main thread. */
  threads: number;
  entry: URL;
  data: Omit<WorkerData, "index">;
  log: Logger;
}

export class WorkerPool {
  readonly #o: PoolOptions;
  readonly #slots: Slot[] = [];
  /** What the workers listen with: undefined until the main thread listens. */
  #ports: Record<string, number> | undefined;
  /** The configuration a worker sets up, one started again after dying too. */
  #config: Pick<WorkerData, "text" | "fileStamps">;
  #stopping = false;
  #nextId = 0;
  readonly #scrapes = new Map<number, (json: Metrics) => void>();
  #listened: () => void = () => {};

  constructor(o: PoolOptions) {
    this.#o = o;
    this.#config = o.data;
    for (let i = 1; i <= o.threads; i++) this.#slots.push(this.#spawn(i, RESTART_MS));
  }

  /** Worker threads (the main thread aside). */
  get size(): number {
    return this.#slots.length;
  }

  /** Every worker listens (ready to answer), as the process's /ready wants it. */
  get ready(): boolean {
    return this.#slots.every((s) => s.listening);
  }

  /** Tells the workers to open their sockets on the ports the main thread bound; resolves once every
   * one listens, or after `waitMs` (a worker late or failing is logged by then). */
  async listen(ports: Record<string, number>, waitMs: number): Promise<void> {
    this.#ports = ports;
    for (const s of this.#slots) this.#post(s.worker, { t: "listen", ports });
    if (this.ready) return;
    await within(new Promise<void>((r) => (this.#listened = r)), waitMs);
    if (!this.ready) this.#o.log.warn({ waitMs }, "workers: not every worker listens yet");
  }

  /** The main thread's new configuration has its ports: every worker sets the new Corefile up and
   * takes it over. Resolves once each is done (taken over, failed or exited), or after `waitMs`: the
   * main thread retires its old configuration only then, since a worker's old one reads the index the
   * old store's watch fills (retired first, a worker answered from a frozen index meanwhile). */
  async reload(
    config: Pick<WorkerData, "text" | "fileStamps">,
    ports: Record<string, number>,
    waitMs: number,
  ): Promise<void> {
    this.#config = config;
    this.#ports = ports;
    const done = this.#slots.map((s) => new Promise<void>((r) => (s.reloaded = r)));
    for (const s of this.#slots) this.#post(s.worker, { t: "reload", ...config, ports });
    await within(Promise.all(done), waitMs);
  }

  /** The memory budget shed: the workers drop their cached answers too. */
  shed(): void {
    for (const s of this.#slots) this.#post(s.worker, { t: "shed" });
  }

  /** Every worker's share of the metrics (registry.ts adds them up). */
  metrics(): Promise<Metrics[]> {
    return Promise.all(
      this.#slots.map(
        (s) =>
          new Promise<Metrics>((resolve) => {
            const id = this.#nextId++;
            const timer = setTimeout(() => {
              this.#scrapes.delete(id);
              resolve([]);
            }, SCRAPE_WAIT_MS);
            this.#scrapes.set(id, (json) => {
              clearTimeout(timer);
              this.#scrapes.delete(id);
              resolve(json);
            });
            this.#post(s.worker, { t: "metrics", id });
          }),
      ),
    );
  }

  /** Stops every worker as the main thread stops (each has the same lameduck); one still running
   * after `waitMs` is terminated. */
  async stop(waitMs: number): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(async (s) => {
        const exited = new Promise((r) => s.worker.once("exit", r));
        this.#post(s.worker, { t: "stop" });
        if (!(await within(exited, waitMs))) await s.worker.terminate();
      }),
    );
  }

  #post(w: Worker, m: ToWorker): void {
    w.postMessage(m);
  }

  #spawn(index: number, restartMs: number): Slot {
    const { log } = this.#o;
    const worker = new Worker(this.#o.entry, {
      workerData: { ...this.#o.data, ...this.#config, index } satisfies WorkerData,
    });
    const slot: Slot = { worker, listening: false, restartMs, reloaded: () => {} };
    // Joined at once: every event the main thread's watch posts from now reaches it, in order; what
    // came before reaches it first, as the store's state (relay-source.ts).
    relay.out.join(worker);
    worker.on("message", (m: FromWorker) => {
      if (m.t === "listening") {
        slot.listening = true;
        slot.restartMs = RESTART_MS;
        if (this.ready) this.#listened();
      } else if (m.t === "reloaded") slot.reloaded();
      else if (m.t === "metrics") this.#scrapes.get(m.id)?.(m.json);
      else if (m.t === "failed") log.error({ worker: index, error: m.message }, "worker failed");
    });
    worker.on("error", (err) => log.error({ worker: index, err }, "worker error"));
    worker.on("exit", (code) => {
      relay.out.leave(worker);
      // It may have died inside a read of a shared index: what it held may be reused now.
      SharedIndex.clearReaderEverywhere(index);
      slot.listening = false;
      slot.reloaded();
      if (this.#stopping) return;
      log.error(
        { worker: index, code, restartInMs: slot.restartMs },
        "worker exited: its sockets left the port (the other threads answer); starting it again",
      );
      setTimeout(() => this.#restart(index, slot), slot.restartMs).unref();
    });
    return slot;
  }

  #restart(index: number, dead: Slot): void {
    if (this.#stopping) return;
    const i = this.#slots.indexOf(dead);
    if (i < 0) return;
    const next = this.#spawn(index, Math.min(dead.restartMs * 2, RESTART_MAX_MS));
    this.#slots[i] = next;
    if (this.#ports !== undefined) this.#post(next.worker, { t: "listen", ports: this.#ports });
  }
}

/** Waits for `p`, or `ms` at most: true when `p` settled in time. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    p.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
  ]);
  clearTimeout(timer);
  return inTime;
}
