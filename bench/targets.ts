// Issue 34's targets, each met or not from one run: clusterdns on kubeadm's whole Corefile against Knot
// and miekg/dns with the same number of workers, and its 2-worker passes against its 1-worker ones
// (BENCH_WORKERS=1,2). Also the RSS split of every server, idle and at the load's peak.

import { MIXES, type MixId } from "./mixes.ts";
import { serverName, type PassResult, type ServerId } from "./pass.ts";
import { atLeast, atMost, med, splitText, type Measured, type Results } from "./report.ts";

const CD: ServerId = "kubeadm";
/** CoreDNS's sizing formula at 10k services: (pods + services) / 1000 + 54 MB, as the issue states it. */
const RSS_BAR_MIB = 84;

const workersText = (w: number) => (w === 1 ? "1 worker" : `${w} workers`);

export function issueTargets(byWorkers: Map<number, Results>, services: number, fixedQps: number): string[] {
  const lines = [
    "",
    "### Targets of issue 34: clusterdns on kubeadm's whole Corefile (batched engine), medians of this run",
    "",
  ];
  const at10k = services === 10_000 ? "" : ` (the target is at 10k services; this run has ${services})`;
  const get = (w: number, mix: MixId, id: ServerId) => byWorkers.get(w)?.get(mix)?.get(id);
  const qps = (w: number, mix: MixId, id: ServerId) => med(get(w, mix, id), (p) => p.qps);
  const unmeasured = (w: number, mix: MixId, ids: ServerId[]) =>
    !byWorkers.has(w)
      ? `not measured (BENCH_WORKERS lacks ${w})`
      : !byWorkers.get(w)!.has(mix)
        ? `not measured (BENCH_MIXES lacks ${mix})`
        : ids.some((id) => get(w, mix, id) === undefined)
          ? `not measured (BENCH_SERVERS lacks one of ${ids.join(", ")})`
          : undefined;

  // QPS against Knot with the same workers; "every pass" pairs pass i of each (they ran alternately).
  const versusKnot = (w: number, mix: MixId, everyPass: boolean) => {
    const no = unmeasured(w, mix, [CD, "knot"]);
    if (no) return no;
    const said = atLeast(qps(w, mix, CD)! / qps(w, mix, "knot")!, 1.0);
    if (!everyPass) return said;
    const cd = get(w, mix, CD)!.passes;
    const knot = get(w, mix, "knot")!.passes;
    const worst = Math.min(...cd.map((p, i) => p.qps / (knot[i]?.qps ?? NaN)));
    return `${said}; worst pass ${worst.toFixed(2)}x${worst >= 1 ? "" : " (**not met** in every pass)"}`;
  };
  // Only the mixes this run measured; a missing worker count is said, as the comparisons need both.
  const mixes = MIXES.filter((mix) => [...byWorkers.values()].some((r) => r.has(mix)));
  for (const w of [...byWorkers.keys()].filter((n) => n > 1)) {
    for (const mix of mixes.filter((x) => x !== "hot")) {
      lines.push(
        `- ${workersText(w)}, ${mix}: QPS >= 1.0x Knot with ${workersText(w)}: ${versusKnot(w, mix, false)}`,
      );
    }
  }
  for (const mix of mixes) {
    lines.push(`- 1 worker, ${mix}: QPS >= 1.0x Knot 1 worker, in every pass: ${versusKnot(1, mix, true)}`);
  }

  const cpu = (w: number, mix: MixId) => med(get(w, mix, CD), (p) => p.cpuUs);
  for (const mix of mixes) {
    const no = unmeasured(1, mix, [CD]) ?? unmeasured(2, mix, [CD]);
    lines.push(
      `- ${mix}: CPU per query with 2 workers <= 1.15x 1 worker's: ` +
        (no ??
          `${atMost(cpu(2, mix)! / cpu(1, mix)!, 1.15, "x")}: ${cpu(2, mix)!.toFixed(1)} against ${cpu(1, mix)!.toFixed(1)} us/query`),
    );
  }

  const peak = (w: number) => med(get(w, "over", CD), (p) => p.loadPeak);
  const split = (w: number) =>
    `; anon / file / shmem ${splitText(get(w, "over", CD), (p) => p.idleSplit)} MiB idle, ` +
    `${splitText(get(w, "over", CD), (p) => p.peakSplit)} at the peak`;
  lines.push(
    `- 1 worker, over: peak RSS under load <= ${RSS_BAR_MIB} MiB${at10k}: ` +
      (unmeasured(1, "over", [CD]) ?? `${atMost(peak(1)!, RSS_BAR_MIB, " MiB")}${split(1)}`),
    `- over: peak RSS with 2 workers <= 1.25x 1 worker's: ` +
      (unmeasured(1, "over", [CD]) ??
        unmeasured(2, "over", [CD]) ??
        `${atMost(peak(2)! / peak(1)!, 1.25, "x")}: ${peak(2)!.toFixed(0)} against ${peak(1)!.toFixed(0)} MiB${split(2)}`),
  );

  const p99 = (w: number, mix: MixId, id: ServerId) => get(w, mix, id)?.fixed?.p99Ms;
  for (const w of byWorkers.keys()) {
    for (const mix of mixes) {
      const no = unmeasured(w, mix, [CD, "miekg"]);
      const a = p99(w, mix, CD);
      const b = p99(w, mix, "miekg");
      lines.push(
        `- ${workersText(w)}, ${mix}: p99 at a steady ${fixedQps} QPS <= 2x miekg/dns's: ` +
          (no ??
            (a === undefined || b === undefined
              ? "not measured (BENCH_FIXED_QPS=0)"
              : `${atMost(a / b, 2, "x")}: ${a.toFixed(2)} ms against ${b.toFixed(2)} ms`)),
      );
    }
  }
  lines.push(
    "- Not measured by this benchmark: 100k services (npm run bench:scale), node-local's idle RSS " +
      "(bench/node-local.ts), p99 during 10,000 watch events per second.",
  );
  return lines;
}

/** Every server's RSS split, anonymous / file-backed / shmem MiB, idle after its start (clusterdns:
 * synced) and at the highest RSS sampled under load, per worker count and mix. */
export function rssSplitLines(byWorkers: Map<number, Results>): string[] {
  const lines = [
    "",
    "### RSS split, MiB: anonymous / file-backed / shmem, idle after start (clusterdns: synced) -> at the load's peak (medians)",
    "",
    "| workers | mix | server | idle | peak |",
    "|---|---|---|---|---|",
  ];
  const pick = (k: "idleSplit" | "peakSplit") => (p: PassResult) => p[k];
  for (const [w, results] of byWorkers) {
    for (const [mix, rows] of results) {
      for (const [id, m] of rows as Map<ServerId, Measured>) {
        lines.push(
          `| ${w} | ${mix} | ${serverName(id, w)} | ${splitText(m, pick("idleSplit"))} | ${splitText(m, pick("peakSplit"))} |`,
        );
      }
    }
  }
  return lines;
}
