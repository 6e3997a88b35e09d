// The Source over the Kubernetes API: one reflector per kind. EndpointSlices are used when the API
// serves discovery.k8s.io/v1 (checked once at start through discovery, retried until it answers);
// otherwise the legacy Endpoints take their place, as CoreDNS does on old clusters.

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

  /** Asks discovery whether endpointslices are served, retrying until the API answers. */
  async function resolveSlices(sink: Sink): Promise<void> {
    const backoff = new Backoff(opts.tuning?.backoff);
    let warned = false;
    while (!stopCtl.signal.aborted) {
      try {
        const timeout = AbortSignal.timeout(opts.tuning?.listTimeoutMs ?? 60_000);
        const served = await client.serves(
          "discovery.k8s.io/v1",
          "endpointslices",
          AbortSignal.any([stopCtl.signal, timeout]),
        );
        if (served) startReflector("endpointslices", sink);
        else {
          fallback = true;
          log.warn(
            { server: client.server },
            "the API does not serve discovery.k8s.io/v1 endpointslices; reading endpoints instead",
          );
          startReflector("endpoints", sink);
        }
        break;
      } catch (err) {
        if (stopCtl.signal.aborted) break;
        const fields = { server: client.server, err: (err as Error).message };
        if (!warned) log.warn(fields, "API discovery failed, retrying");
        else log.debug(fields, "API discovery failed again");
        warned = true;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, backoff.next());
          stopCtl.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
        });
      }
    }
    pending--;
    notify();
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
      if (kinds.includes("endpointslices")) {
        pending++;
        discovery = resolveSlices(sink);
      }
      for (const kind of kinds) if (kind !== "endpointslices") startReflector(kind, sink);
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
