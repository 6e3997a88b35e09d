// The Source over the Kubernetes API: one reflector per kind. EndpointSlices are used when the API
// serves discovery.k8s.io/v1 (checked once at start through discovery, retried until it answers);
// otherwise the legacy Endpoints take their place, as CoreDNS does on old clusters. ServiceImports
// (multicluster) are read once the API serves their CRD.

import type { Logger } from "pino";
import { Backoff } from "./backoff.ts";
import { Latch } from "./latch.ts";
import { createClient } from "./client.ts";
import type { ApiClient, ClientOptions } from "./api.ts";
import { Reflector } from "./reflector.ts";
import { limitClient, type ApiLimits } from "./rate-limit.ts";
import type { ReflectorStats, ReflectorTuning } from "./reflector.ts";
import type { Kind, Sink, Source } from "./source.ts";

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
  const client = limitClient(opts.client ?? createClient(opts), opts.limits ?? {});
  const log = opts.log;
  const kinds = [...new Set(opts.kinds)];
  const reflectors = new Map<Kind, Reflector>();
  const stopCtl = new AbortController();
  let pending = 0;
  let fallback = false;
  let discovery: Promise<void> | undefined;
  let started = false;
  /** Open once synced, or stopped. */
  const settled = new Latch();

  const synced = () => started && pending === 0 && [...reflectors.values()].every((r) => r.synced);
  const notify = () => {
    if (synced() || stopCtl.signal.aborted) settled.open();
  };

  function startReflector(kind: Kind, sink: Sink): void {
    if (reflectors.has(kind) || stopCtl.signal.aborted) return;
    const r = new Reflector({
      ...opts.tuning,
      client,
      kind,
      sink,
      log,
      labelSelector: SELECTED_KINDS.has(kind) ? opts.labelSelector : undefined,
      namespaces: opts.namespaces,
    });
    reflectors.set(kind, r);
    r.start();
    void r.waitSynced().then(notify);
  }

  /** Asks discovery whether the API serves `resource` in `groupVersion`, retrying until it answers;
   * undefined once stopped. */
  async function serves(groupVersion: string, resource: string): Promise<boolean | undefined> {
    const backoff = new Backoff(opts.tuning?.backoff);
    let warned = false;
    while (!stopCtl.signal.aborted) {
      try {
        const timeout = AbortSignal.timeout(opts.tuning?.listTimeoutMs ?? 60_000);
        return await client.serves(groupVersion, resource, AbortSignal.any([stopCtl.signal, timeout]));
      } catch (err) {
        if (stopCtl.signal.aborted) break;
        const fields = { server: client.server, err: (err as Error).message };
        if (!warned) log.warn(fields, "API discovery failed, retrying");
        else log.debug(fields, "API discovery failed again");
        warned = true;
        await pause(backoff.next());
      }
    }
    return undefined;
  }

  function pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      stopCtl.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
    });
  }

  /** EndpointSlices when the API serves discovery.k8s.io/v1, else the legacy Endpoints. */
  async function resolveSlices(sink: Sink): Promise<void> {
    const served = await serves("discovery.k8s.io/v1", "endpointslices");
    if (served === true) startReflector("endpointslices", sink);
    else if (served === false) {
      fallback = true;
      log.warn(
        { server: client.server },
        "the API does not serve discovery.k8s.io/v1 endpointslices; reading endpoints instead",
      );
      startReflector("endpoints", sink);
    }
    pending--;
    notify();
  }

  /** ServiceImports when the MCS CRDs are installed. Until they are, the store gets an empty list (so
   * it syncs and the multicluster zones answer that nothing is imported), and discovery is asked again
   * every IMPORTS_RECHECK_MS: the CRDs may come after this server. */
  async function resolveImports(sink: Sink): Promise<void> {
    for (let first = true; !stopCtl.signal.aborted; first = false) {
      const served = await serves(IMPORTS_GROUP_VERSION, "serviceimports");
      if (served === true) startReflector("serviceimports", sink);
      else if (served === false && first) {
        log.warn(
          { server: client.server },
          `the API does not serve ${IMPORTS_GROUP_VERSION} serviceimports (the MCS CRDs are not installed): no service is imported until they are`,
        );
        sink.listStart("serviceimports");
        sink.listDone("serviceimports");
      }
      if (first) {
        pending--;
        notify();
      }
      if (served !== false) return;
      await pause(IMPORTS_RECHECK_MS);
    }
  }

  function state(): string {
    if (!started) return "not started";
    if (stopCtl.signal.aborted) return "stopped";
    const all = [...reflectors.values()];
    if (!synced())
      return all.some((r) => r.stats().errors > 0 && !r.stats().connected)
        ? "connecting, failing"
        : "syncing";
    return all.every((r) => r.stats().connected) ? "connected" : "disconnected, serving last known state";
  }

  return {
    start(sink) {
      if (started) return Promise.resolve();
      started = true;
      const discovered: Promise<void>[] = [];
      if (kinds.includes("endpointslices")) {
        pending++;
        discovered.push(resolveSlices(sink));
      }
      if (kinds.includes("serviceimports")) {
        pending++;
        discovered.push(resolveImports(sink));
      }
      discovery = Promise.all(discovered).then(() => undefined);
      for (const kind of kinds)
        if (kind !== "endpointslices" && kind !== "serviceimports") startReflector(kind, sink);
      return Promise.resolve();
    },
    async stop() {
      stopCtl.abort();
      await discovery;
      await Promise.all([...reflectors.values()].map((r) => r.stop()));
      notify();
    },
    describe() {
      return `api ${client.server} (${state()})`;
    },
    synced,
    waitSynced() {
      notify();
      return settled.wait();
    },
    stats() {
      const all = [...reflectors.values()].map((r) => r.stats());
      return {
        server: client.server,
        synced: synced(),
        connected: all.length > 0 && all.every((s) => s.connected),
        endpointsFallback: fallback,
        kinds: all,
      };
    },
  };
}
