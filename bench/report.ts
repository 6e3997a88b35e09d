// The benchmark's tables, one per mix, and the targets under them, each met or not and by how much.

import { MIX_TITLES, type MixId } from "./mixes.ts";
import { serverName, type PassResult, type ServerId } from "./pass.ts";
import type { RssSplit } from "./processes.ts";

/** A server's passes on one mix: the full-speed ones, and the fixed-rate one for latency. */
export interface Measured {
  passes: PassResult[];
  fixed?: PassResult;
}

export type Results = Map<MixId, Map<ServerId, Measured>>;

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The median of a field over the passes that have it; undefined when none does. */
export function med(
  m: Measured | undefined,
  pick: (p: PassResult) => number | undefined,
): number | undefined {
  const xs = (m?.passes ?? []).map(pick).filter((x): x is number => x !== undefined && !Number.isNaN(x));
  return xs.length === 0 ? undefined : median(xs);
}

const fixed = (x: number | undefined, digits: number) => (x === undefined ? "-" : x.toFixed(digits));

/** "anon / file / shmem" MiB, medians over the passes. */
export function splitText(m: Measured | undefined, pick: (p: PassResult) => RssSplit | undefined): string {
  const part = (k: keyof RssSplit) =>
    fixed(
      med(m, (p) => pick(p)?.[k]),
      0,
    );
  return med(m, (p) => pick(p)?.anon) === undefined
    ? "-"
    : `${part("anon")} / ${part("file")} / ${part("shmem")}`;
}

export function mixTable(
  mix: MixId,
  rows: Map<ServerId, Measured>,
  o: { fixedQps: number; workers: number },
): string[] {
  const { fixedQps, workers } = o;
  const qps = (id: ServerId) => med(rows.get(id), (p) => p.qps);
  const ratio = (id: ServerId, anchor: ServerId) => {
    const a = qps(anchor);
    return a === undefined ? "-" : (qps(id)! / a).toFixed(2);
  };
  const head = [
    "server",
    "QPS (median)",
    "QPS per pass",
    "vs minimal Node",
    "vs miekg/dns",
    "vs Knot",
    "CPU us/query",
    fixedQps > 0 ? `p50 / p99 ms at ${fixedQps} QPS` : "p50 / p99 ms (no fixed-rate pass)",
    "RSS MiB: start peak / load peak / end",
    "RSS anon / file / shmem MiB: idle",
    "... at the load's peak",
    "JS heap B/query",
    "answer cache hits",
    "lost",
  ];
  const row = (id: ServerId, m: Measured) => {
    const cell = (pick: (p: PassResult) => number | undefined, digits: number) => fixed(med(m, pick), digits);
    const f = m.fixed;
    const hits = med(m, (p) => p.hitRatio);
    return [
      serverName(id, workers),
      cell((p) => p.qps, 0),
      m.passes.map((p) => p.qps.toFixed(0)).join(" / "),
      ratio(id, "minimal"),
      ratio(id, "miekg"),
      ratio(id, "knot"),
      cell((p) => p.cpuUs, 1),
      f ? `${fixed(f.p50Ms, 3)} / ${fixed(f.p99Ms, 3)}` : "-",
      [cell((p) => p.startPeak, 0), cell((p) => p.loadPeak, 0), cell((p) => p.endRss, 0)].join(" / "),
      splitText(m, (p) => p.idleSplit),
      splitText(m, (p) => p.peakSplit),
      heapText(m),
      hits === undefined ? "-" : `${(100 * hits).toFixed(1)}%`,
      String(m.passes.reduce((n, p) => n + p.lost, 0) + (f?.lost ?? 0)),
    ];
  };
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [
    "",
    `### ${MIX_TITLES[mix]}: ${workers === 1 ? "1 worker" : `${workers} workers`} each`,
    "",
    line(head),
    line(head.map(() => "---")).replaceAll(" ", ""),
    ...[...rows].map(([id, m]) => line(row(id, m))),
  ];
}

/** Heap bytes per query, with what the window's edges added; "< N" when too few collections ran for
 * more than a bound in some pass. */
function heapText(m: Measured): string {
  const heap = med(m, (p) => p.heapPerQuery);
  if (heap === undefined) return "-";
  if (m.passes.some((p) => p.heapMeasured === false)) {
    return `< ${Math.max(...m.passes.map((p) => p.heapPerQuery ?? 0)).toFixed(0)}`;
  }
  return `${heap.toFixed(0)} (±${med(m, (p) => p.heapSlack)!.toFixed(0)})`;
}

/** "met"/"not met" for a ratio that must be at least `bar`, with the margin. */
export function atLeast(value: number, bar: number): string {
  const said = `${value.toFixed(2)}x (bar ${bar.toFixed(1)}x`;
  return value >= bar
    ? `met, ${said}; ${((value / bar - 1) * 100).toFixed(0)}% above)`
    : `**not met**, ${said}; needs ${(bar / value).toFixed(2)}x more)`;
}

/** "met"/"not met" for a value that must be at most `bar` (a ratio, or MiB), with the margin. */
export function atMost(value: number, bar: number, unit: "x" | " MiB"): string {
  const said = unit === "x" ? `${value.toFixed(2)}x (bar ${bar}x` : `${value.toFixed(0)} MiB (bar ${bar} MiB`;
  return value <= bar
    ? `met, ${said}; ${((1 - value / bar) * 100).toFixed(0)}% under)`
    : `**not met**, ${said}; ${(value / bar).toFixed(2)}x the bar)`;
}

/** The targets for clusterdns on kubeadm's whole Corefile, and where the dgram engine lands. */
export function targets(results: Results, services: number, fixedQps: number): string[] {
  const get = (mix: MixId, id: ServerId) => results.get(mix)?.get(id);
  const qps = (mix: MixId, id: ServerId) => med(get(mix, id), (p) => p.qps);
  const p99 = (mix: MixId, id: ServerId) => get(mix, id)?.fixed?.p99Ms;
  const lines = [
    "",
    `### Earlier issues' targets (1 worker): kubeadm's whole Corefile, \`cache\`'s default capacities, batched engine; medians of this run`,
    "",
  ];
  const missing = (mix: MixId, ids: ServerId[], what: () => number | undefined) =>
    !results.has(mix)
      ? `not measured (BENCH_MIXES lacks ${mix})`
      : ids.some((id) => !results.get(mix)!.has(id)) || what() === undefined
        ? `not measured (BENCH_SERVERS lacks one of ${ids.join(", ")})`
        : undefined;
  const versus = (mix: MixId, id: ServerId, anchor: ServerId, bar: number) => {
    const r = () => (qps(mix, anchor) === undefined ? undefined : qps(mix, id)! / qps(mix, anchor)!);
    return missing(mix, [id, anchor], r) ?? atLeast(r()!, bar);
  };
  const tailRatio = (mix: MixId, id: ServerId) =>
    p99(mix, "miekg") === undefined || p99(mix, id) === undefined
      ? undefined
      : p99(mix, id)! / p99(mix, "miekg")!;
  const tail = (mix: MixId, id: ServerId) =>
    missing(mix, [id, "miekg"], () => tailRatio(mix, id)) ??
    `${atMost(tailRatio(mix, id)!, 2, "x")}: ${p99(mix, id)!.toFixed(2)} ms against miekg/dns's ${p99(mix, "miekg")!.toFixed(2)} ms`;
  const at10k = services === 10_000 ? "" : ` (the target is at 10k services; this run has ${services})`;
  const rss = () => med(get("over", "kubeadm"), (p) => p.loadPeak);
  lines.push(
    `- Over-capacity mix, QPS >= 1.0x the minimal Node server: ${versus("over", "kubeadm", "minimal", 1.0)}`,
    `- Over-capacity mix, QPS >= 1.5x miekg/dns: ${versus("over", "kubeadm", "miekg", 1.5)}`,
    `- Over-capacity mix, p99 at a steady ${fixedQps} QPS <= 2x miekg/dns's: ${tail("over", "kubeadm")}`,
    `- Over-capacity mix, peak RSS under load <= 100 MiB${at10k}: ` +
      (missing("over", ["kubeadm"], rss) ??
        `${atMost(rss()!, 100, " MiB")}; the start's peak was ${med(get("over", "kubeadm"), (p) => p.startPeak)!.toFixed(0)} MiB`),
    `- Unique names, QPS >= 1.0x miekg/dns: ${versus("unique", "kubeadm", "miekg", 1.0)}`,
    `- Unique names, p99 at a steady ${fixedQps} QPS <= 2x miekg/dns's: ${tail("unique", "kubeadm")}`,
    `- Hot mix, no worse than before (compare with the previous run's row): ${hotLine(results, "kubeadm")}`,
  );
  if ([...results.values()].some((rows) => rows.has("kubeadm-dgram"))) {
    lines.push("", "Where the dgram engine lands (kubeadm's Corefile; not a target):");
    for (const mix of results.keys()) {
      const of = (anchor: ServerId) => {
        const a = qps(mix, anchor);
        const d = qps(mix, "kubeadm-dgram");
        return a === undefined || d === undefined ? "-" : `${(d / a).toFixed(2)}x`;
      };
      const r = tailRatio(mix, "kubeadm-dgram");
      lines.push(
        `- ${mix}: QPS ${of("minimal")} the minimal Node server, ${of("miekg")} miekg/dns; p99 ` +
          (r === undefined
            ? "-"
            : `${p99(mix, "kubeadm-dgram")!.toFixed(2)} ms, ${r.toFixed(2)}x miekg/dns's`),
      );
    }
  }
  const hits = (mix: MixId) => med(get(mix, "kubeadm"), (p) => p.hitRatio);
  const alloc = [...results.keys()]
    .filter((mix) => med(get(mix, "kubeadm"), (p) => p.heapPerQuery) !== undefined)
    .map(
      (mix) =>
        `${mix} ${heapText(get(mix, "kubeadm")!)} B/query` +
        (hits(mix) === undefined ? "" : ` at ${(100 * hits(mix)!).toFixed(1)}% answer cache hits`),
    );
  if (alloc.length > 0) {
    lines.push(
      "",
      `JS heap allocation, kubeadm's Corefile (a hit should allocate nothing, a miss a few hundred bytes at most): ${alloc.join("; ")}.`,
    );
  }
  return lines;
}

function hotLine(results: Results, id: ServerId): string {
  const rows = results.get("hot");
  const m = rows?.get(id);
  if (!rows || !m) return "not measured";
  const q = med(m, (p) => p.qps)!;
  const vs = (anchor: ServerId) => {
    const a = med(rows.get(anchor), (p) => p.qps);
    return a === undefined ? "" : `, ${(q / a).toFixed(2)}x ${anchor}`;
  };
  const tail = m.fixed?.p99Ms === undefined ? "" : `; p99 at the fixed rate ${m.fixed.p99Ms.toFixed(2)} ms`;
  return `QPS ${q.toFixed(0)}${vs("minimal")}${vs("miekg")}${vs("knot")}, CPU ${med(m, (p) => p.cpuUs)!.toFixed(1)} us/query${tail}`;
}
