// The kubernetes plugin's series, read at scrape time from the live stores and API sources (one per
// `kubernetes` directive of the running configuration). Watch counters restart at zero when a reload
// replaces the source.

import type { Gauge } from "prom-client";
import { registry, scrapedGauge } from "../../metrics/registry.ts";
import { PlainHistogram } from "../../metrics/plain.ts";
import type { Store } from "./store/store.ts";
import type { ApiSourceStats } from "./api/source-api.ts";

interface Live {
  store: Store;
  /** Undefined for `objects` files. */
  api?: () => ApiSourceStats;
}

const live = new Set<Live>();

/** Counts this store (and API source) in the metrics until the returned function is called. */
export function track(store: Store, api?: () => ApiSourceStats): () => void {
  const entry: Live = { store, api };
  live.add(entry);
  return () => live.delete(entry);
}

const gauge = scrapedGauge;

gauge("clusterdns_kubernetes_objects", "Objects in the slim store, by kind.", ["kind"], (g) => {
  for (const { store } of live) {
    for (const [kind, n] of Object.entries(store.stats().objects)) g.inc({ kind }, n);
  }
});
gauge(
  "clusterdns_kubernetes_store_bytes",
  "Bytes the slim store's records take: the shared index's entries, or an estimate of their heap.",
  [],
  (g) => {
    for (const { store } of live) g.inc(store.stats().bytes);
  },
);
gauge("clusterdns_kubernetes_synced", "1 once every store has completed its first sync.", [], (g) => {
  g.set([...live].every(({ store }) => store.stats().synced) ? 1 : 0);
});
gauge(
  "clusterdns_kubernetes_api_connected",
  "1 while every watch of the Kubernetes API is healthy; 0 while serving the last known state.",
  [],
  (g) => g.set([...live].every(({ api }) => api === undefined || api().connected) ? 1 : 0),
);
const perKind = (field: "relists" | "watchRestarts" | "errors") => (g: Gauge) => {
  for (const { api } of live) for (const r of api?.().kinds ?? []) g.inc({ kind: r.kind }, r[field]);
};
gauge(
  "clusterdns_kubernetes_relists",
  "LISTs after the first (410 Gone, errors), by kind.",
  ["kind"],
  perKind("relists"),
);
gauge(
  "clusterdns_kubernetes_watch_restarts",
  "Watches started again after one ended, failed or went silent, by kind.",
  ["kind"],
  perKind("watchRestarts"),
);
gauge(
  "clusterdns_kubernetes_api_errors",
  "Failed requests to the Kubernetes API, by kind.",
  ["kind"],
  perKind("errors"),
);
gauge(
  "clusterdns_kubernetes_watch_backlog_bytes",
  "Bytes of watch events received and not applied yet (a storm; bounded, past it the watches are not read).",
  [],
  (g) => {
    for (const { api } of live) g.inc(api?.().backlog.bytes ?? 0);
  },
);
gauge(
  "clusterdns_kubernetes_watch_backlog_full",
  "Times the watch backlog reached its bound and the watches stopped being read for a while.",
  [],
  (g) => {
    for (const { api } of live) g.inc(api?.().backlog.fulls ?? 0);
  },
);

/** CoreDNS's buckets for it: 1 ms doubling 20 times (to about 9 minutes). */
const PROGRAMMING_BUCKETS = Array.from({ length: 20 }, (_, i) => 0.001 * 2 ** i);
const programming = new PlainHistogram(
  "coredns_kubernetes_dns_programming_duration_seconds",
  "Seconds from the change behind an Endpoints or EndpointSlice object (its last-change-trigger-time) to the DNS server answering it, by service kind (the Kubernetes DNS programming latency SLI).",
  PROGRAMMING_BUCKETS,
);
registry.registerMetric(programming.asMetric());

/** Counts one programmed change (Store's onProgrammed). */
export function observeProgramming(serviceKind: string, seconds: number): void {
  programming.series({ service_kind: serviceKind }).observe(seconds);
}
