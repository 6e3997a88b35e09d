// The process's one metrics registry. It outlives reloads, so counters keep counting across them, as
// CoreDNS's do. Plugins add their series here at setup (each metric once per process); the prometheus
// plugin serves it.

import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { MetricObjectWithValues, MetricValue } from "prom-client";
import { PlainCounter } from "./plain.ts";
import {
  answerCacheStats,
  clientCostStats,
  memoryStats,
  reloadStats,
  serverStats,
  stepAsideStats,
} from "./server-stats.ts";
import { VERSION } from "../version.ts";
import { eventLoopDelayGauges } from "./event-loop-delay.ts";
import { inWorker, threadRole } from "../runtime/thread-role.ts";

export const registry = new Registry();

// Node's process metrics. Event-loop lag is sampled every 100 ms, not prom-client's 10 ms: at 10 ms the
// sampling timer woke an idle server 100 times a second (0.9% of a core at 10k services, none with
// 100 ms), and a stall of 100 ms or more is still always seen.
// Only on the main thread: they describe the process (its CPU, its memory), which a worker's copy would
// count again.
if (!inWorker()) {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  eventLoopDelayGauges(registry, 100);
}

new Gauge({
  name: "coredns_build_info",
  help: "Always 1; the labels name the clusterdns version and the Node.js runtime (in goversion, for CoreDNS's dashboards).",
  labelNames: ["version", "revision", "goversion"],
  registers: [registry],
}).set({ version: VERSION, revision: "", goversion: process.version }, 1);

new Counter({
  name: "coredns_panics_total",
  help: "Queries whose plugin chain threw an exception (answered SERVFAIL, the server kept serving).",
  registers: [registry],
  collect() {
    this.reset();
    this.inc(serverStats.panics);
  },
});

new Counter({
  name: "coredns_reload_failed_total",
  help: "Corefile changes that were rejected by reload; the old configuration kept serving.",
  registers: [registry],
  collect() {
    this.reset();
    this.inc(reloadStats.failed);
  },
});

new Gauge({
  name: "coredns_reload_version_info",
  help: "Always 1; value is the hash of the Corefile that is serving, hash names the algorithm.",
  labelNames: ["hash", "value"],
  registers: [registry],
  collect() {
    this.reset();
    if (reloadStats.hash !== "") this.set({ hash: "sha512", value: reloadStats.hash }, 1);
  },
});

scrapedCounter(
  "clusterdns_answer_cache_hits_total",
  "Queries answered from the answer cache in front of the plugin chain (the fast path).",
  [],
  (c) => c.inc(answerCacheStats.hits),
);
scrapedCounter(
  "clusterdns_answer_cache_misses_total",
  "Queries the answer cache had no live reply for: the wire lane or the plugin chain answered them.",
  [],
  (c) => c.inc(answerCacheStats.misses),
);
scrapedCounter(
  "clusterdns_answer_lane_total",
  "Misses answered in the same turn by the wire lane (no plugin chain), by how: answered by a plugin, " +
    "or refilled into cache from its source copy.",
  ["how"],
  (c) => {
    c.inc({ how: "answered" }, answerCacheStats.lane - answerCacheStats.refills);
    c.inc({ how: "refilled" }, answerCacheStats.refills);
  },
);

scrapedCounter(
  "clusterdns_client_limited_total",
  "Queries of a client (source address) past its share of the server's CPU: deferred until its credit " +
    "was back, or refused (REFUSED) when the wait would be too long.",
  ["action"],
  (c) => {
    c.inc({ action: "deferred" }, clientCostStats.deferred);
    c.inc({ action: "refused" }, clientCostStats.refused);
  },
);

scrapedGauge(
  "clusterdns_memory_budget_bytes",
  "Resident memory the process keeps under by shedding (-memory.budget, else 3/4 of the cgroup's limit; 0: none).",
  [],
  (g) => g.set(memoryStats.budget),
);
scrapedGauge(
  "clusterdns_memory_shedding",
  "1 while the process is over its memory budget: cached answers dropped, large replies refused.",
  [],
  (g) => g.set(memoryStats.shedding),
);
scrapedGauge(
  "clusterdns_udp_stepped_aside",
  "1 while the main thread's UDP sockets have stepped aside for the worker threads (-workers N) as it " +
    "applies a backlog of watch events (a watch storm).",
  [],
  (g) => g.set(stepAsideStats.aside),
);
scrapedCounter(
  "clusterdns_udp_steps_aside_total",
  "Times the main thread's UDP sockets stepped aside for the worker threads during a watch storm.",
  [],
  (c) => c.inc(stepAsideStats.times),
);
scrapedCounter(
  "clusterdns_memory_shed_total",
  "What the memory budget did: checks that found the process over it and dropped the cached answers " +
    "(what=dropped), and replies refused for their size while over it (what=refused).",
  ["what"],
  (c) => {
    c.inc({ what: "dropped" }, memoryStats.sheds);
    c.inc({ what: "refused" }, memoryStats.refused);
  },
);

scrapedCounter(
  "clusterdns_worker_queries_total",
  "Queries looked up in the answer store of each thread (worker 0 is the main thread; -workers N): " +
    "how the kernel spread the clients over the threads' sockets.",
  ["worker"],
  (c) => c.inc({ worker: String(threadRole.index) }, answerCacheStats.hits + answerCacheStats.misses),
);

scrapedGauge(
  "clusterdns_answer_cache_entries",
  "Replies held in the answer stores (100k per listener, and each cache's capacity per kind).",
  [],
  (g) => g.set(answerCacheStats.entries),
);

/** coredns_plugin_enabled{server,zone,view,name}: 1 for every plugin of a block that has prometheus
 * (query-stats.ts sets it). */
export const pluginEnabled = new PlainCounter(
  "coredns_plugin_enabled",
  "1 for each plugin of each server block zone that has prometheus.",
  "gauge",
);
registry.registerMetric(pluginEnabled.asMetric());

/** A counter whose values are read from plain numbers at scrape time: `fill` adds them. */
export function scrapedCounter(
  name: string,
  help: string,
  labelNames: string[],
  fill: (c: Counter) => void,
): void {
  new Counter({ name, help, labelNames, registers: [registry], collect: collector(fill) });
}

/** A gauge whose values are read at scrape time: `fill` adds them. */
export function scrapedGauge(
  name: string,
  help: string,
  labelNames: string[],
  fill: (g: Gauge) => void,
): void {
  new Gauge({ name, help, labelNames, registers: [registry], collect: collector(fill) });
}

function collector<T extends { reset(): void }>(fill: (m: T) => void): (this: T) => void {
  return function (this: T) {
    this.reset();
    fill(this);
  };
}

/** Gauges that add up over the threads (each thread has its own answer store and caches); every other
 * gauge describes the process and is the main thread's alone (rrl's accounts, one table for all). */
const SUMMED_GAUGES = new Set([
  "clusterdns_answer_cache_entries",
  "coredns_cache_entries",
  "coredns_dnssec_cache_entries",
]);

type Metrics = MetricObjectWithValues<MetricValue<string>>[];

/** A worker's share of the metrics: its counters and histograms, and the gauges that add up. */
export async function workerMetricsJson(): Promise<Metrics> {
  const all = (await registry.getMetricsAsJSON()) as Metrics;
  return all.filter((m) => String(m.type) !== "gauge" || SUMMED_GAUGES.has(m.name));
}

/** The workers' shares, when there are worker threads (-workers N; set by src/server/workers.ts). */
export const threadMetrics: { collect?: () => Promise<Metrics[]> } = {};

/** The exposition text of the process: the main thread's registry, plus every worker's share added
 * series by series (same name and labels: summed). */
export async function scrape(): Promise<string> {
  if (threadMetrics.collect === undefined) return registry.metrics();
  const [own, others] = await Promise.all([registry.getMetricsAsJSON(), threadMetrics.collect()]);
  // Each series is summed: the main thread's own gauges have no counterpart in a worker's share.
  const sum = (ms: Metrics) => ms.map((m) => ({ ...m, aggregator: "sum" as const }));
  return AggregatorRegistry.aggregate([sum(own as Metrics), ...others.map(sum)]).metrics();
}
