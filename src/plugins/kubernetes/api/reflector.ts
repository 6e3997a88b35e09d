// One reflector keeps one kind of object in the sink in step with the API, for good: a paged LIST
// (each page goes to the sink as it arrives, framed by listStart/listDone), then a WATCH from the
// list's resourceVersion with bookmarks. A watch that ends is resumed from the last resourceVersion
// seen; 410 Gone (HTTP or an ERROR event) means the history is gone, so it lists again; any other
// failure waits a jittered backoff and retries: the watch, after a transport error, or a LIST, after
// the API refused the watch (see listsAgain). A watch silent for longer than the bookmark interval
// allows is dropped and resumed.
//
// Namespace restriction: the reflector always lists and watches cluster-wide and drops objects
// outside the namespaces before the sink. One reflector per namespace would need the sink to tell
// their lists apart (listDone of one would sweep the others' objects); CoreDNS watches cluster-wide
// too, and so needs the same RBAC.

import type { ApplyQueue } from "./apply-queue.ts";
import type { Logger } from "pino";
import { Backoff } from "./backoff.ts";
import { Latch } from "../sync/latch.ts";
import type { BackoffOptions } from "./backoff.ts";
import { KubeError, KubeErrorCode, statusError } from "./api.ts";
import type { ApiClient, KStatus, Query } from "./api.ts";
import type { EventType, Kind, KObject, Sink } from "../model/source.ts";

/** Where each kind lives in the API. */
export const RESOURCE_PATHS: Record<Kind, string> = {
  services: "/api/v1/services",
  endpoints: "/api/v1/endpoints",
  namespaces: "/api/v1/namespaces",
  pods: "/api/v1/pods",
  endpointslices: "/apis/discovery.k8s.io/v1/endpointslices",
  serviceimports: "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports",
};

/** A watch with no event and no bookmark for this long is dropped and resumed from the last
 * resourceVersion seen: kube-apiserver sends a bookmark about every minute, so this is two missed
 * bookmarks and some slack. It bounds how long a dead stream that no error reports (a half-open
 * connection, a stuck server) holds back changes. */
export const SILENT_WATCH_MS = 150_000;

export interface ReflectorTuning {
  /** Objects per LIST page (default 500). */
  pageSize?: number;
  /** Bound on one LIST request, in ms (default 60 000). */
  listTimeoutMs?: number;
  /** The server ends each watch after this many seconds, drawn in [t, 2t) (default 300, as
   * client-go's 5-10 minutes), which spreads reconnects. */
  watchTimeoutSeconds?: number;
  /** A watch with no event and no bookmark for this long is dropped and resumed (default
   * SILENT_WATCH_MS). */
  silentTimeoutMs?: number;
  /** A watch that ends sooner than this with no event counts as a failure (default 1000). */
  minWatchMs?: number;
  backoff?: BackoffOptions;
}

export interface ReflectorOptions extends ReflectorTuning {
  client: ApiClient;
  kind: Kind;
  sink: Sink;
  log: Logger;
  labelSelector?: string;
  /** Only objects of these namespaces (for kind namespaces: only these namespaces) reach the sink. */
  namespaces?: readonly string[];
  /** Where LIST pages are applied, an object a step, in slices that let answers through between
   * them (the watch events' queue); without it a page is applied as it arrives. */
  queue?: ApplyQueue;
}

export interface ReflectorStats {
  kind: Kind;
  /** The first LIST has completed. */
  synced: boolean;
  /** The last request succeeded (a list page, or a watch event or bookmark). */
  connected: boolean;
  /** Completed LISTs (all pages). */
  lists: number;
  /** LISTs after the first (after 410 Gone, or a watch the API refused). */
  relists: number;
  /** Watches started again after one ended, timed out or went silent. */
  watchRestarts: number;
  errors: number;
  lastError?: string;
  resourceVersion: string;
}

/** How a watch ended. `events` counts the events received before the end, bookmarks included (each
 * proves the stream worked), an ERROR event not. */
type WatchEnd = { kind: "ended"; events: number } | { kind: "gone"; events: number } | { kind: "silent" };

class Stopped extends Error {}

/** Watches in a row the API refused with a Status before the reflector lists again, whatever the
 * Status said. */
export const REFUSALS_BEFORE_LIST = 3;

/** Whether a watch the API refused (`refusals` in a row, this one included) sends the reflector back
 * to a LIST. The resourceVersion held may be one the API will never serve again: above its own after
 * an etcd restore (kube-apiserver's 504 "Too large resource version", which no waiting cures: at
 * once), or otherwise unusable (a Status that keeps coming: after REFUSALS_BEFORE_LIST, as
 * client-go's reflector lists again after a watch error). Not at the first 500 or 503: an API under
 * strain would get a full LIST of the cluster, a consistent read from etcd, from every replica. 429
 * only asks to slow down (kube-apiserver sends it while its watch cache initializes), and a failed
 * transport (refused, reset, timed out) or a frame that is not JSON says nothing of the
 * resourceVersion: the watch is retried from it, which is cheap and loses nothing. */
function listsAgain(err: unknown, refusals: number): boolean {
  if (!(err instanceof KubeError) || err.code !== KubeErrorCode.STATUS || err.status === 429) return false;
  return /too large resource version/i.test(err.message) || refusals >= REFUSALS_BEFORE_LIST;
}

export class Reflector {
  readonly kind: Kind;
  readonly #options: ReflectorOptions;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  readonly #path: string;
  readonly #namespaces?: ReadonlySet<string>;
  readonly #stopCtl = new AbortController();
  #running?: Promise<void>;
  #rv = "";
  #s = { synced: false, connected: false, lists: 0, relists: 0, watchRestarts: 0, errors: 0 };
  #lastError?: string;
  /** Whether the last failure was logged as a warning (so retries log at debug until recovery). */
  #warned = false;
  /** Open once the first LIST has completed, or the reflector has stopped. */
  readonly #settled = new Latch();

  constructor(o: ReflectorOptions) {
    this.#options = o;
    this.kind = o.kind;
    this.#log = o.log;
    this.#backoff = new Backoff(o.backoff);
    this.#path = RESOURCE_PATHS[o.kind];
    if (o.namespaces && o.namespaces.length > 0) this.#namespaces = new Set(o.namespaces);
  }

  get synced(): boolean {
    return this.#s.synced;
  }

  stats(): ReflectorStats {
    return { kind: this.kind, ...this.#s, lastError: this.#lastError, resourceVersion: this.#rv };
  }

  /** Starts the list/watch loop in the background. */
  start(): void {
    this.#running ??= this.#run();
  }

  /** Resolves once the first LIST has completed, or the reflector has stopped. */
  waitSynced(): Promise<void> {
    return this.#settled.wait();
  }

  async stop(): Promise<void> {
    this.#stopCtl.abort();
    await this.#running;
  }

  get #stopped(): boolean {
    return this.#stopCtl.signal.aborted;
  }

  async #run(): Promise<void> {
    let needList = true;
    let goneInARow = 0;
    let refusedInARow = 0;
    while (!this.#stopped) {
      try {
        if (needList) {
          await this.#list();
          needList = false;
          refusedInARow = 0;
        }
        if (this.#stopped) break;
        const end = await this.#watch();
        if (end.kind !== "silent" && end.events > 0) goneInARow = refusedInARow = 0;
        if (end.kind === "gone") {
          // Relist at once; only 410s that keep coming without a watch event in between wait.
          this.#log.info(
            { kind: this.kind, resourceVersion: this.#rv },
            "watch history expired (410), listing again",
          );
          needList = true;
          if (goneInARow++ > 0) await this.#sleep(this.#backoff.next());
          continue;
        }
        this.#s.watchRestarts++;
        if (end.kind === "silent") {
          this.#failed(
            new KubeError(KubeErrorCode.TRANSPORT, `watch silent for ${this.#silentMs()} ms`),
            false,
          );
        }
      } catch (err) {
        if (this.#stopped) break;
        if (err instanceof KubeError && err.gone) {
          // An expired continue token (the list took too long): start the list over.
          this.#log.info({ kind: this.kind }, "list continue token expired (410), listing again");
          needList = true;
          if (goneInARow++ > 0) await this.#sleep(this.#backoff.next());
          continue;
        }
        this.#failed(err, true);
        if (err instanceof KubeError && err.code === KubeErrorCode.STATUS) refusedInARow++;
        if (!needList && listsAgain(err, refusedInARow)) {
          this.#log.info(
            { kind: this.kind, resourceVersion: this.#rv, err: (err as Error).message },
            "the API refused the watch, listing again",
          );
          needList = true;
        }
        await this.#sleep(this.#backoff.next());
      }
    }
    this.#settled.open();
  }

  #silentMs(): number {
    return this.#options.silentTimeoutMs ?? SILENT_WATCH_MS;
  }

  #failed(err: unknown, isError: boolean): void {
    if (err instanceof Stopped || this.#stopped) return;
    const message = err instanceof Error ? err.message : String(err);
    this.#s.errors++;
    this.#lastError = message;
    const wasConnected = this.#s.connected;
    this.#s.connected = false;
    if (!this.#warned || wasConnected) {
      this.#warned = true;
      this.#log.warn(
        { kind: this.kind, err: message, code: (err as KubeError).code },
        isError ? "API request failed, retrying" : "watch went silent, resuming",
      );
    } else {
      this.#log.debug({ kind: this.kind, err: message }, "API request failed again");
    }
  }

  #ok(): void {
    if (this.#s.connected) return;
    this.#s.connected = true;
    if (this.#warned) {
      this.#warned = false;
      this.#log.info({ kind: this.kind }, "API connection restored");
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const signal = this.#stopCtl.signal;
      function done() {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done);
    });
  }

  #wanted(obj: KObject): boolean {
    if (!this.#namespaces) return true;
    return this.#namespaces.has(
      this.kind === "namespaces" ? obj.metadata.name : (obj.metadata.namespace ?? ""),
    );
  }

  /** Runs `step` until it returns true (or once, if it returns nothing): through the queue, behind
   * what is queued before it, or here and now without one. Resolves once it is done. */
  #applyList(step: () => boolean | void): Promise<void> {
    const queue = this.#options.queue;
    if (!queue) {
      while (step() === false);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      queue.push({
        bytes: 0,
        step: () => {
          if (step() === false) return false;
          resolve();
          return true;
        },
      });
    });
  }

  /** Delivers to the sink; a sink that throws is logged and the reflector carries on. */
  #deliver(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ kind: this.kind, err }, "sink failed on an object");
    }
  }

  async #list(): Promise<void> {
    const started = Date.now();
    const first = this.#s.lists === 0;
    // No resourceVersion: a consistent read of the newest state, which the API cannot find too new
    // (an etcd restore turns one the reflector held into "Too large resource version").
    const query: Query = { limit: this.#options.pageSize ?? 500, labelSelector: this.#options.labelSelector };
    const sink = this.#options.sink;
    let delivered = 0;
    let cont: string | undefined;
    let pages = 0;
    // One page after the other, as client-go's pager does. Asking for the next page while applying
    // this one was tried: at 100k services under load it made the start slower (32-34 s against
    // 39-42 s at load average 10-12), the test API server spending 2-3 s more CPU, for no less of ours.
    do {
      const signal = AbortSignal.any([
        this.#stopCtl.signal,
        AbortSignal.timeout(this.#options.listTimeoutMs ?? 60_000),
      ]);
      const page = await this.#options.client.list(this.#path, { ...query, continue: cont }, signal);
      if (this.#stopped) throw new Stopped();
      this.#ok();
      // Opened only once the first page is in, so an API that is down does not open list after list.
      if (pages++ === 0) await this.#applyList(() => this.#deliver(() => sink.listStart(this.kind)));
      let i = 0;
      let bad: unknown;
      // One object a step: a relist of 100k services (a 410, a reload with a new source) must not
      // hold the thread that answers for the seconds it takes. Each item is parsed in its step, so it
      // dies young (list-page.ts).
      await this.#applyList(() => {
        if (this.#stopped) return true;
        while (i < page.size) {
          let item: KObject;
          try {
            item = page.item(i++);
          } catch (err) {
            bad = err;
            return true;
          }
          if (!this.#wanted(item)) continue;
          delivered++;
          this.#deliver(() => sink.apply(this.kind, "ADDED", item));
          break;
        }
        return i >= page.size;
      });
      page.release();
      if (this.#stopped) throw new Stopped();
      // An item that is not an object fails the list, as a page that is not JSON does.
      if (bad !== undefined) throw bad;
      cont = page.metadata.continue || undefined;
      this.#rv = page.metadata.resourceVersion ?? "";
    } while (cont);
    await this.#applyList(() => this.#deliver(() => sink.listDone(this.kind)));
    this.#s.lists++;
    if (!first) this.#s.relists++;
    const fields = {
      kind: this.kind,
      objects: delivered,
      resourceVersion: this.#rv,
      ms: Date.now() - started,
    };
    if (first) this.#log.info(fields, "listed");
    else this.#log.debug(fields, "listed again");
    this.#s.synced = true;
    this.#settled.open();
  }

  /** Runs one watch until it ends; resolves how, rejects on a failure. */
  #watch(): Promise<WatchEnd> {
    const silentMs = this.#silentMs();
    const t = this.#options.watchTimeoutSeconds ?? 300;
    const query: Query = {
      resourceVersion: this.#rv,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(t + Math.random() * t),
      labelSelector: this.#options.labelSelector,
    };
    const started = Date.now();
    return new Promise<WatchEnd>((resolve, reject) => {
      let settled = false;
      let events = 0;
      let timer: NodeJS.Timeout | undefined;
      const finish = (r: WatchEnd | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#stopCtl.signal.removeEventListener("abort", onStop);
        ctl?.abort();
        if (r instanceof Error) reject(r);
        else resolve(r);
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => finish({ kind: "silent" }), silentMs);
      };
      let ctl: AbortController | undefined;
      const onStop = () => finish(new Stopped());
      if (this.#stopped) return onStop();
      this.#stopCtl.signal.addEventListener("abort", onStop);
      arm();

      const onEvent = (type: string, obj: unknown) => {
        if (settled) return;
        arm();
        this.#ok();
        const o = obj as KObject | undefined;
        if (type === "ERROR") {
          const s = obj as KStatus | undefined;
          if (s?.code === 410) finish({ kind: "gone", events });
          else finish(statusError(s));
          return;
        }
        events++;
        const rv = o?.metadata?.resourceVersion;
        if (type === "BOOKMARK") {
          if (rv) this.#rv = rv;
          return;
        }
        if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") {
          this.#log.debug({ kind: this.kind, type }, "unknown watch event type ignored");
          return;
        }
        if (!o?.metadata) return;
        if (rv) this.#rv = rv;
        if (this.#wanted(o)) this.#deliver(() => this.#options.sink.apply(this.kind, type as EventType, o));
      };
      const onDone = (err: KubeError | null) => {
        if (settled) return;
        if (err?.gone) return finish({ kind: "gone", events });
        // A stream that ran (events, or long enough) and then ended is the normal life of a watch;
        // one that fails at once is a failure to back off from.
        if (
          events > 0 ||
          (err?.code !== KubeErrorCode.STATUS && Date.now() - started >= (this.#options.minWatchMs ?? 1000))
        ) {
          return finish({ kind: "ended", events });
        }
        finish(err ?? new KubeError(KubeErrorCode.TRANSPORT, "watch closed at once with no event"));
      };
      this.#options.client.watch(this.#path, query, onEvent, onDone, silentMs + 1000).then(
        (c) => {
          ctl = c;
          if (settled) c.abort();
        },
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }
}
