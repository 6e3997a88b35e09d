// clusterdns_insights_* series, read from the counters at scrape time: per namespace (bounded by the
// workload rows), and per workload only for the top 10 by queries, so a cluster's size does not
// become the series count.

import { scrapedCounter } from "../../metrics/registry.ts";
import type { Counter } from "prom-client";
import { C, COUNTERS } from "./counters.ts";
import type { Insights } from "./insights.ts";

const live = new Set<Insights>();
/** Workloads given a series of their own. */
const TOP_WORKLOADS = 10;

/** Adds (or with `on` false, removes) a block's insights from what the scrape reads. */
export function track(i: Insights, on = true): void {
  if (on) live.add(i);
  else live.delete(i);
}

/** Sums counter `c` by namespace (special rows under their own name). */
function byNamespace(c: Counter, k: number): void {
  for (const ins of live) {
    const sums = new Map<string, number>();
    const wl = ins.workloads;
    for (let row = 0; row < wl.rows.length; row++) {
      const r = wl.rows[row];
      const ns = r.kind === "" ? r.name : r.namespace;
      sums.set(ns, (sums.get(ns) ?? 0) + ins.counters.totals[row * COUNTERS + k]);
    }
    for (const [namespace, v] of sums) if (v > 0) c.inc({ namespace }, v);
  }
}

const perNamespace: [string, string, number][] = [
  ["clusterdns_insights_queries_total", "Queries, by the namespace of the pod that sent them.", C.QUERIES],
  ["clusterdns_insights_nxdomain_total", "NXDOMAIN replies, by the client's namespace.", C.NXDOMAIN],
  ["clusterdns_insights_servfail_total", "SERVFAIL replies, by the client's namespace.", C.SERVFAIL],
  [
    "clusterdns_insights_cache_hits_total",
    "Replies from the answer cache, by the client's namespace.",
    C.CACHE_HITS,
  ],
  [
    "clusterdns_insights_search_wasted_total",
    "NXDOMAIN queries spent walking search lists before the name asked was found, by namespace.",
    C.WASTED,
  ],
];
for (const [name, help, k] of perNamespace)
  scrapedCounter(name, help, ["namespace"], (c) => byNamespace(c, k));

scrapedCounter(
  "clusterdns_insights_workload_queries_total",
  `Queries of the ${TOP_WORKLOADS} workloads that sent the most (others only in their namespace's series).`,
  ["namespace", "workload", "kind"],
  (c) => {
    for (const ins of live) {
      const wl = ins.workloads;
      const t = ins.counters.totals;
      const rows = [...wl.rows.keys()].filter((r) => wl.rows[r].kind !== "" && t[r * COUNTERS] > 0);
      rows.sort((a, b) => t[b * COUNTERS] - t[a * COUNTERS]);
      for (const r of rows.slice(0, TOP_WORKLOADS)) {
        const w = wl.rows[r];
        c.inc({ namespace: w.namespace, workload: w.name, kind: w.kind }, t[r * COUNTERS + C.QUERIES]);
      }
    }
  },
);
