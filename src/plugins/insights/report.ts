// What the JSON API returns (and the page and `clusterdns top` show): one read of the insights over
// a window. Built on request only; the query path never sees it.

import type { Insights } from "./insights.ts";
import { C, S, WINDOWS, type WindowName } from "./counters.ts";
import { OTHER } from "./workloads.ts";

const WINDOW_SECONDS: Record<WindowName, number> = { "1m": 60, "10m": 600, "1h": 3600 };
/** Seconds of the chart. */
const CHART_S = 300;
/** A workload's NXDOMAINs spike when the last minute has this many and 3x its mean minute before. */
const SPIKE_MIN = 30;

export interface WorkloadReport {
  workload: string;
  namespace: string;
  kind: string;
  name: string;
  queries: number;
  noerror: number;
  nxdomain: number;
  servfail: number;
  refused: number;
  cacheHits: number;
  /** NXDOMAINs spent on search-list walks. */
  wasted: number;
  walks: number;
  saves: { trailingDot: number; ndots2: number; autopath: number };
  fix: string;
  spike: boolean;
}

export interface TopName {
  name: string;
  count: number;
  error: number;
}

export interface Report {
  window: WindowName;
  windowSeconds: number;
  generatedAt: string;
  uptimeSeconds: number;
  totals: {
    queries: number;
    qps: number;
    nxdomainRatio: number;
    servfailRatio: number;
    cacheHitRatio: number;
    wasted: number;
    wastedRatio: number;
  };
  chart: { seconds: number; queries: number[]; nxdomain: number[]; cacheHits: number[]; wasted: number[] };
  workloads: WorkloadReport[];
  namespaces: { namespace: string; queries: number; nxdomain: number; wasted: number }[];
  wastedNames: { name: string; workload: string; nxdomain: number }[];
  topNames: TopName[];
  topNxdomain: TopName[];
  topClients: { address: string; workload: string; count: number; error: number }[];
  upstreams: ReturnType<Insights["upstreams"]["health"]>;
  servfailCauses: { plugin: string; cause: string; count: number }[];
  attribution: { synced: boolean; pods: number; workloads: number; capacity: number; overflow: number };
  memoryBytes: number;
  /** The top lists count 1 query in this many (1: every query; above sampling.ts's RATE a second). */
  topSampledEvery: number;
}

/** Why a plugin answers SERVFAIL, in words. */
const CAUSES: Record<string, string> = {
  forward: "upstream failed, timed out or answered SERVFAIL",
  grpc: "gRPC upstream failed, timed out or answered SERVFAIL",
  kubernetes: "cluster state not synced yet",
  "": "the server could not answer (no plugin replied)",
};

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 10_000) / 10_000 : 0);

/** Whether the row's last minute has SPIKE_MIN NXDOMAINs and over 3 times its mean minute of the
 * (up to) 9 before; never in the first 2 minutes, which have no past to compare with. */
function spiking(ins: Insights, row: number): boolean {
  const c = ins.counters;
  const nx1 = c.window(row, C.NXDOMAIN, "1m");
  const before = c.window(row, C.NXDOMAIN, "10m") - nx1;
  const pastMinutes = Math.min(9, (Date.now() - ins.startedAt) / 60_000 - 1);
  return pastMinutes >= 1 && nx1 >= SPIKE_MIN && nx1 > (3 * before) / pastMinutes;
}

function fixFor(w: Omit<WorkloadReport, "fix" | "spike">, autopathOn: boolean): string {
  if (w.wasted === 0) return "";
  // Most of its waste is names with 2 dots or more, found as asked: ndots 2 asks those first.
  if (w.saves.ndots2 * 2 >= w.wasted) return 'dnsConfig ndots: "2"';
  if (w.saves.autopath > 0 && !autopathOn) return "trailing dot (FQDN), or autopath";
  return "trailing dot (FQDN)";
}

export function report(ins: Insights, window: WindowName, n: number): Report {
  const c = ins.counters;
  const wl = ins.workloads;
  const rows: WorkloadReport[] = [];
  for (let row = 0; row < wl.rows.length; row++) {
    const get = (k: number) => c.window(row, k, window);
    const queries = get(C.QUERIES);
    if (queries === 0) continue;
    const r = wl.rows[row];
    const base = {
      workload: wl.label(row),
      namespace: r.namespace,
      kind: r.kind,
      name: r.name,
      queries,
      noerror: get(C.NOERROR),
      nxdomain: get(C.NXDOMAIN),
      servfail: get(C.SERVFAIL),
      refused: get(C.REFUSED),
      cacheHits: get(C.CACHE_HITS),
      wasted: get(C.WASTED),
      walks: get(C.WALKS),
      saves: { trailingDot: get(C.WASTED), ndots2: get(C.WASTED_NDOTS2), autopath: get(C.WASTED_AUTOPATH) },
    };
    const spike = spiking(ins, row);
    rows.push({ ...base, fix: fixFor(base, ins.options.autopath), spike });
  }
  rows.sort((a, b) => b.wasted - a.wasted || b.queries - a.queries);
  const byNs = new Map<string, { namespace: string; queries: number; nxdomain: number; wasted: number }>();
  for (const w of rows) {
    if (w.kind === "") continue;
    const e = byNs.get(w.namespace) ?? { namespace: w.namespace, queries: 0, nxdomain: 0, wasted: 0 };
    e.queries += w.queries;
    e.nxdomain += w.nxdomain;
    e.wasted += w.wasted;
    byNs.set(w.namespace, e);
  }
  const seconds = WINDOW_SECONDS[window];
  const total = rows.reduce((t, w) => t + w.queries, 0);
  const sum = (k: "nxdomain" | "servfail" | "cacheHits" | "wasted") => rows.reduce((t, w) => t + w[k], 0);
  const up = Math.max(1, Math.min(seconds, (Date.now() - ins.startedAt) / 1000));
  return {
    window,
    windowSeconds: seconds,
    generatedAt: new Date().toISOString(),
    uptimeSeconds: Math.round((Date.now() - ins.startedAt) / 1000),
    totals: {
      queries: total,
      qps: Math.round((total / up) * 10) / 10,
      nxdomainRatio: ratio(sum("nxdomain"), total),
      servfailRatio: ratio(sum("servfail"), total),
      cacheHitRatio: ratio(sum("cacheHits"), total),
      wasted: sum("wasted"),
      wastedRatio: ratio(sum("wasted"), total),
    },
    chart: {
      seconds: CHART_S,
      queries: ins.seconds.last(S.QUERIES, CHART_S),
      nxdomain: ins.seconds.last(S.NXDOMAIN, CHART_S),
      cacheHits: ins.seconds.last(S.CACHE_HITS, CHART_S),
      wasted: ins.seconds.last(S.WASTED, CHART_S),
    },
    workloads: rows.slice(0, n * 5),
    namespaces: [...byNs.values()].sort((a, b) => b.queries - a.queries).slice(0, n * 5),
    wastedNames: ins.wasted.read(window, n).map((e) => ({
      name: e.key.name,
      workload: wl.label(e.key.tag),
      nxdomain: e.count - e.error,
    })),
    topNames: ins.names.read(window, n).map((e) => ({ name: e.key.name, count: e.count, error: e.error })),
    topNxdomain: ins.nxNames
      .read(window, n)
      .map((e) => ({ name: e.key.name, count: e.count, error: e.error })),
    topClients: ins.clients.read(window, n).map((e) => ({
      address: e.key,
      workload: wl.label(wl.rowOf(e.key)),
      count: e.count,
      error: e.error,
    })),
    upstreams: ins.upstreams.health(),
    servfailCauses: [...ins.servfails].map(([plugin, count]) => ({
      plugin: plugin === "" ? "(server)" : plugin,
      cause: CAUSES[plugin] ?? `${plugin} answered SERVFAIL`,
      count,
    })),
    attribution: {
      synced: wl.synced,
      pods: wl.pods,
      workloads: wl.rows.length - OTHER - 1,
      capacity: wl.capacity - OTHER - 1,
      overflow: wl.overflow,
    },
    memoryBytes: ins.bytes,
    topSampledEvery: ins.sampling.every,
  };
}

export const WINDOW_NAMES = Object.keys(WINDOWS) as WindowName[];
