// Where the p99 at a steady rate goes: one clusterdns (BENCH_COREFILE, kubeadm's by default) on the
// benchmark's cluster, run with --trace-gc at BENCH_FIXED_QPS (10,000) for BENCH_SECONDS (20), then
// p50/p99, RSS, and each full collection of the measured window with its final pause and its biggest
// incremental-marking step. Extra node flags go in BENCH_NODE_FLAGS. BENCH_MIX picks the mix (hot by
// default, after a 2 s warm-up that fills the answer cache; over and unique start cold).
//   node bench/gc-tail.ts
//   BENCH_MIX=over node bench/gc-tail.ts
//   BENCH_NODE_FLAGS=--no-concurrent-marking node bench/gc-tail.ts
// On a server pinned to one core, the concurrent marker shares the core with the main thread, and a
// marking step that waits for it takes 12-24 ms (the README's Benchmark section has the figures).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import { generateCluster } from "./cluster-gen.ts";
import { serveWithCorefile, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import { PIN, stop } from "./processes.ts";
import { mixChoice, mixQueries } from "./mixes.ts";

const qps = Number(process.env.BENCH_FIXED_QPS ?? 10_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const flags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
const core = PIN ? 1 : undefined;

const dir = mkdtempSync(join(tmpdir(), "clusterdns-gc-tail-"));
const cluster = generateCluster({ services: Number(process.env.BENCH_SERVICES ?? 10_000) });
const queryFile = join(dir, "queries.txt");
const mix = mixChoice();
writeFileSync(queryFile, mixQueries(cluster, mix).join("\n") + "\n");
const { api, corefile } = await serveWithCorefile(cluster, dir);
const { cd, port } = await startClusterdns(corefile, { nodeFlags: ["--trace-gc", ...flags] });
try {
  await untilSynced(cd);
  if (mix === "hot") await dnsperf({ port, queryFile, seconds: 2, core }); // fills the answer cache
  const from = cd.lines.length;
  const r = await dnsperf({ port, queryFile, seconds, core, maxQps: qps, percentiles: true });
  const status = readFileSync(`/proc/${cd.proc.pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  console.log(
    `${mix} mix, ${qps} QPS for ${seconds} s, node flags: ${flags.join(" ") || "the image's"}\n` +
      `p50 ${r.p50Ms!.toFixed(3)} ms, p99 ${r.p99Ms!.toFixed(2)} ms; ` +
      `RSS ${(kb("VmRSS") / 1024).toFixed(0)} MB (peak ${(kb("VmHWM") / 1024).toFixed(0)})`,
  );
  // RSS split: file-backed pages (the node binary's code and data that ran) against anonymous memory,
  // and of that what V8's heap had committed at the last collection (the rest: malloc, buffers, stacks).
  const rollup = readFileSync(`/proc/${cd.proc.pid}/smaps_rollup`, "utf8");
  const rollupMb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(rollup)?.[1] ?? NaN) / 1024;
  const lines = cd.lines.slice(from);
  const last = lines.findLast((l) => / MB, /.test(l)) ?? "";
  const committed = /-> [\d.]+ \(([\d.]+)\) MB/.exec(last)?.[1] ?? "?";
  const pooled = /pooled: ([\d.]+) MB/.exec(last)?.[1] ?? "?";
  console.log(
    `RSS split: file-backed ${(rollupMb("Rss") - rollupMb("Anonymous")).toFixed(0)} MB, anonymous ` +
      `${rollupMb("Anonymous").toFixed(0)} MB, of which V8's heap committed ${committed} MB ` +
      `(and ${pooled} MB of freed pages pooled)`,
  );
  const scavenges = lines.filter((l) => l.includes("Scavenge")).length;
  console.log(`scavenges: ${scavenges}; full collections:`);
  for (const l of lines.filter((l) => l.includes("Mark-Compact"))) {
    const heap = /Mark-Compact ([\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB)/.exec(l)?.[1];
    const pause = /MB, ([\d.]+) \//.exec(l)?.[1];
    const step = /biggest step ([\d.]+ ms)/.exec(l)?.[1] ?? "-";
    console.log(`  heap ${heap}, final pause ${pause} ms, biggest marking step ${step}`);
  }
} finally {
  await stop(cd.proc);
  await api.close();
  rmSync(dir, { recursive: true, force: true });
}
