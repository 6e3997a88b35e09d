// The Source over the Kubernetes API: one reflector per kind. EndpointSlices are used when the API
// serves discovery.k8s.io/v1 (checked once at start through discovery, retried until it answers);
// otherwise the legacy Endpoints take their place, as CoreDNS does on old clusters. ServiceImports
// (multicluster) are read once the API serves their CRD.

import type { Logger } from "pino";
import { Backoff } from "./backoff.ts";
import { Latch } from "../sync/latch.ts";
import { createClient } from "./client.ts";
import { ApplyQueue, type ApplyQueueStats } from "./apply-queue.ts";
import type { ApiClient, ClientOptions } from "./api.ts";
import { Reflector } from "./reflector.ts";
import { limitClient, type ApiLimits } from "./rate-limit.ts";
import type { ReflectorStats, ReflectorTuning } from "./reflector.ts";
import type { Kind, Sink, Source } from "../model/source.ts";
import { watchBacklog } from "../../../runtime/watch-backlog.ts";

export interface ApiSourceOptions extends ClientOptions {
  kinds: Kind[];
  /** CoreDNS `labels`: applies to services, endpoints and endpointslices only. */
  labelSelector?: string;
  /** CoreDNS `namespaces`: only objects of these namespaces reach the sink (see reflector.ts). */
  namespaces?: string[];
  log: Logger;
  tuning?: ReflectorTuning;
  /** Replaces the client built from the connection options (tests). */
  client?: ApiClient;
  /** Client-side limits on the requests (apiserver_qps, apiserver_burst, apiserver_max_inflight). */
  limits?: ApiLimits;
}

export interface ApiSourceStats {
  server: string;
  /** Every reflector has completed its first list. */
  synced: boolean;
  /** Every reflector's last request succeeded. */
  connected: boolean;
  /** endpointslices were asked for but the API does not serve them: endpoints are read instead. */
  endpointsFallback: boolean;
  kinds: ReflectorStats[];
  /** Watch events received and not applied yet (apply-queue.ts). */
  backlog: ApplyQueueStats;
}

export interface ApiSource extends Source {
  synced(): boolean;
  /** Resolves once every kind has completed its first list (or the source stopped). */
  waitSynced(): Promise<void>;
  stats(): ApiSourceStats;
}

const SELECTED_KINDS: ReadonlySet<Kind> = new Set(["services", "endpoints", "endpointslices"]);
const IMPORTS_GROUP_VERSION = "multicluster.x-k8s.io/v1alpha1";
/** How often discovery is asked again for ServiceImports while the API does not serve them. */
const IMPORTS_RECHECK_MS = 60_000;

/** Builds the source; connection options are checked here (a KubeError with code KUBE_ERR_CONFIG),
 * so a bad kubeconfig fails at setup rather than at start. */
export function apiSource(opts: ApiSourceOptions): ApiSource {
  return new KubeApiSource(opts);
}

class KubeApiSource implements ApiSource {
  readonly #opts: ApiSourceOptions;
  readonly #client: ApiClient;
  /** Where every watch of this source queues its events (one budget for all of them). */
  readonly #queue = new ApplyQueue({ onBacklog: watchBacklog.report, restMs: () => watchBacklog.restMs });
  readonly #log: Logger;
  readonly #kinds: Kind[];
  readonly #reflectors = new Map<Kind, Reflector>();
  readonly #stopCtl = new AbortController();
  /** Discoveries (endpointslices, serviceimports) that have not answered yet. */
  #pending = 0;
  #fallback = false;
  #discovery: Promise<void> | undefined;
  #started = false;
  /** Open once synced, or stopped. */
  readonly #settled = new Latch();

  constructor(opts: ApiSourceOptions) {
    this.#opts = opts;
    this.#client = limitClient(opts.client ?? createClient(opts, { queue: this.#queue }), opts.limits ?? {});
    this.#log = opts.log;
    this.#kinds = [...new Set(opts.kinds)];
  }

  start(sink: Sink): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#started = true;
    const discovered: Promise<void>[] = [];
    if (this.#kinds.includes("endpointslices")) {
      this.#pending++;
      discovered.push(this.#resolveSlices(sink));
    }
    if (this.#kinds.includes("serviceimports")) {
      this.#pending++;
      discovered.push(this.#resolveImports(sink));
    }
    this.#discovery = Promise.all(discovered).then(() => undefined);
    for (const kind of this.#kinds)
      if (kind !== "endpointslices" && kind !== "serviceimports") this.#startReflector(kind, sink);
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.#stopCtl.abort();
    await this.#discovery;
    await Promise.all([...this.#reflectors.values()].map((r) => r.stop()));
    this.#queue.stopped();
    this.#notify();
  }

  describe(): string {
    return `api ${this.#client.server} (${this.#state()})`;
  }

  synced(): boolean {
    return this.#started && this.#pending === 0 && [...this.#reflectors.values()].every((r) => r.synced);
  }

  waitSynced(): Promise<void> {
    this.#notify();
    return this.#settled.wait();
  }

  stats(): ApiSourceStats {
    const all = [...this.#reflectors.values()].map((r) => r.stats());
    return {
      server: this.#client.server,
      synced: this.synced(),
      connected: all.length > 0 && all.every((s) => s.connected),
      endpointsFallback: this.#fallback,
      kinds: all,
      backlog: this.#queue.stats(),
    };
  }

  #notify(): void {
    if (this.synced() || this.#stopCtl.signal.aborted) this.#settled.open();
  }

  #startReflector(kind: Kind, sink: Sink): void {
    if (this.#reflectors.has(kind) || this.#stopCtl.signal.aborted) return;
    const r = new Reflector({
      ...this.#opts.tuning,
      client: this.#client,
      kind,
      sink,
      log: this.#log,
      labelSelector: SELECTED_KINDS.has(kind) ? this.#opts.labelSelector : undefined,
      namespaces: this.#opts.namespaces,
      queue: this.#queue,
    });
    this.#reflectors.set(kind, r);
    r.start();
    void r.waitSynced().then(() => this.#notify());
  }

  /** Asks discovery whether the API serves `resource` in `groupVersion`, retrying until it answers;
   * undefined once stopped. */
  async #serves(groupVersion: string, resource: string): Promise<boolean | undefined> {
    const backoff = new Backoff(this.#opts.tuning?.backoff);
    const stopped = this.#stopCtl.signal;
    let warned = false;
    while (!stopped.aborted) {
      try {
        const timeout = AbortSignal.timeout(this.#opts.tuning?.listTimeoutMs ?? 60_000);
        return await this.#client.serves(groupVersion, resource, AbortSignal.any([stopped, timeout]));
      } catch (err) {
        if (stopped.aborted) break;
        const fields = { server: this.#client.server, err: (err as Error).message };
        if (!warned) this.#log.warn(fields, "API discovery failed, retrying");
        else this.#log.debug(fields, "API discovery failed again");
        warned = true;
        await this.#pause(backoff.next());
      }
    }
    return undefined;
  }

  /** Waits `ms`, or until the source stops. */
  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#stopCtl.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
    });
  }

  /** EndpointSlices when the API serves discovery.k8s.io/v1, else the legacy Endpoints. */
  async #resolveSlices(sink: Sink): Promise<void> {
    const served = await this.#serves("discovery.k8s.io/v1", "endpointslices");
    if (served === true) this.#startReflector("endpointslices", sink);
    else if (served === false) {
      this.#fallback = true;
      this.#log.warn(
        { server: this.#client.server },
        "the API does not serve discovery.k8s.io/v1 endpointslices; reading endpoints instead",
      );
      this.#startReflector("endpoints", sink);
    }
    this.#pending--;
    this.#notify();
  }

  /** ServiceImports when the MCS CRDs are installed. Until they are, the store gets an empty list (so
   * it syncs and the multicluster zones answer that nothing is imported), and discovery is asked again
   * every IMPORTS_RECHECK_MS: the CRDs may come after this server. */
  async #resolveImports(sink: Sink): Promise<void> {
    for (let first = true; !this.#stopCtl.signal.aborted; first = false) {
      const served = await this.#serves(IMPORTS_GROUP_VERSION, "serviceimports");
      if (served === true) this.#startReflector("serviceimports", sink);
      else if (served === false && first) {
        this.#log.warn(
          { server: this.#client.server },
          `the API does not serve ${IMPORTS_GROUP_VERSION} serviceimports (the MCS CRDs are not installed): no service is imported until they are`,
        );
        sink.listStart("serviceimports");
        sink.listDone("serviceimports");
      }
      if (first) {
        this.#pending--;
        this.#notify();
      }
      if (served !== false) return;
      await this.#pause(IMPORTS_RECHECK_MS);
    }
  }

  /** The state describe() shows. */
  #state(): string {
    if (!this.#started) return "not started";
    if (this.#stopCtl.signal.aborted) return "stopped";
    const all = [...this.#reflectors.values()];
    if (!this.synced())
      return all.some((r) => r.stats().errors > 0 && !r.stats().connected)
        ? "connecting, failing"
        : "syncing";
    return all.every((r) => r.stats().connected) ? "connected" : "disconnected, serving last known state";
  }
}
