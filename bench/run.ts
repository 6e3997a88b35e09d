// The benchmark: a generated cluster (bench/cluster-gen.ts, 10k services by default) served in one run by
//   - clusterdns through the test API server, on kubeadm's whole Corefile (the main row: `cache 30` in
//     the same block as `kubernetes`, as most clusters run it), on kubeadm's current default (its cache
//     skips cluster.local), and on `kubernetes` alone (a trimmed Corefile, labelled so);
//   - Knot DNS with one UDP worker, from the equivalent zone file (also the upstream of `forward`);
//   - two anchors replaying Knot's precomputed answers: a minimal Node server (Node's floor for a DNS
//     server) and a miekg/dns server (CoreDNS's own library with no plugins);
//   - a bare Node UDP echo (Node's own I/O floor, no DNS at all).
// Servers are pinned to core 0, dnsperf to core 1. Answers are compared with Knot's before any load.
// Rounds alternate between the servers so a slow minute of a shared machine hits all alike; the table
// shows each server's median round.
//   npm run bench
//   BENCH_SERVICES=1000 BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_SERVERS=kubeadm,minimal,miekg npm run bench
// Needs dnsperf, knotd, taskset, go and miekg/dns (Debian: dnsperf, knot, util-linux, golang-go,
// golang-github-miekg-dns-dev).

import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dnsperf, type PerfResult } from "./dnsperf.ts";
import { generateCluster } from "./cluster-gen.ts";
import { serveWithCorefiles, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import type { BenchCorefile } from "./cluster-api.ts";
import { startKnot } from "./knot.ts";
import { compareAnswers } from "./answer-check.ts";
import { precomputeAnswers } from "./precompute.ts";
import { writeAnswers } from "./answers-file.ts";
import { buildMiekg, startMiekg } from "./miekg.ts";
import { PIN, cpuSecondsOf, memoryOf, startPinned, stop, type Started } from "./processes.ts";

const ROOT = resolve(import.meta.dirname, "..");
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const services = env("BENCH_SERVICES", 10_000);
const seconds = env("BENCH_SECONDS", 10);
const rounds = env("BENCH_ROUNDS", 3);
const fixedRate = env("BENCH_FIXED_QPS", 10_000);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-"));
const core = PIN ? 1 : undefined;

const ALL = [
  "kubeadm",
  "kubeadm-dgram",
  "kubeadm-disable",
  "lean",
  "lean-dgram",
  "knot",
  "minimal",
  "miekg",
  "echo",
] as const;
type Id = (typeof ALL)[number];
const chosen = new Set<Id>(
  (process.env.BENCH_SERVERS?.split(",") ?? ALL).map((id) => {
    if (!(ALL as readonly string[]).includes(id))
      throw new Error(`BENCH_SERVERS: unknown '${id}' (${ALL.join(", ")})`);
    return id as Id;
  }),
);

const NAMES: Record<Id, string> = {
  kubeadm: "clusterdns, kubeadm Corefile (`cache 30`)",
  "kubeadm-dgram": "clusterdns, kubeadm Corefile (`cache 30`), dgram engine",
  "kubeadm-disable": "clusterdns, kubeadm Corefile of 1.31+ (cache skips cluster.local)",
  lean: "clusterdns, `kubernetes` only (trimmed)",
  "lean-dgram": "clusterdns, `kubernetes` only (trimmed), dgram engine",
  knot: "Knot DNS, 1 UDP worker",
  minimal: "minimal Node server (precomputed answers)",
  miekg: "miekg/dns minimal server (precomputed answers)",
  echo: "bare Node UDP echo (no DNS)",
};

interface Target {
  id: Id;
  port: number;
  server: Started;
  runs: PerfResult[];
  /** Server CPU microseconds per answered query, one per round. */
  cpu: number[];
  fixed?: PerfResult;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const freeUdpPort = () => 20000 + Math.floor(Math.random() * 20000);

async function main(): Promise<void> {
  const cluster = generateCluster({ services });
  const zoneFile = join(dir, "cluster.local.zone");
  const queryFile = join(dir, "queries.txt");
  writeFileSync(zoneFile, cluster.zone);
  writeFileSync(queryFile, cluster.queries.join("\n") + "\n");
  log(`cluster: ${JSON.stringify(cluster.counts)}, ${cluster.queries.length} queries in the mix`);

  // Knot always runs: it is the reference the answers are checked against and forward's upstream.
  const knotPort = freeUdpPort();
  const knot = await startKnot("cluster.local", zoneFile, knotPort);
  const targets: Target[] = [];
  const add = (id: Id, port: number, server: Started) => {
    if (chosen.has(id)) targets.push({ id, port, server, runs: [], cpu: [] });
  };

  // Each clusterdns row: its Corefile, and the UDP engine (the batched one ships; dgram is Node's own,
  // the like-for-like comparison with the minimal Node server).
  const rows: [Id, BenchCorefile, "batched" | "dgram"][] = [
    ["kubeadm", "kubeadm", "batched"],
    ["kubeadm-dgram", "kubeadm", "dgram"],
    ["kubeadm-disable", "kubeadm-disable", "batched"],
    ["lean", "lean", "batched"],
    ["lean-dgram", "lean", "dgram"],
  ];
  const wanted = rows.filter(([id]) => chosen.has(id));
  const { api, corefiles } = await serveWithCorefiles(
    cluster,
    dir,
    [...new Set(wanted.map(([, c]) => c))],
    knotPort,
  );
  for (const [id, c, engine] of wanted) {
    const { cd, port } = await startClusterdns(corefiles[c], { engine });
    await untilSynced(cd);
    add(id, port, cd);
  }
  add("knot", knotPort, knot);

  if (chosen.has("minimal") || chosen.has("miekg")) {
    const answersFile = join(dir, "answers.bin");
    writeFileSync(answersFile, writeAnswers(await precomputeAnswers(knotPort, cluster.queries)));
    if (chosen.has("minimal")) {
      const port = freeUdpPort();
      const args = [join(ROOT, "bench", "minimal-server.ts"), String(port), answersFile];
      add("minimal", port, await startPinned(process.execPath, args, /minimal listening/));
    }
    if (chosen.has("miekg")) {
      const port = freeUdpPort();
      add("miekg", port, await startMiekg(buildMiekg(), port, answersFile));
    }
  }
  if (chosen.has("echo")) {
    const port = freeUdpPort();
    const args = [join(ROOT, "bench", "echo-server.ts"), String(port)];
    add("echo", port, await startPinned(process.execPath, args, /echo listening/));
  }

  for (const t of targets) {
    if (t.id === "knot" || t.id === "echo") continue;
    // The anchors replay answers to queries without EDNS, which is how dnsperf asks.
    const edns = t.id !== "minimal" && t.id !== "miekg";
    const diffs = await compareAnswers(cluster.queries.slice(0, 2000), t.port, knotPort, { edns });
    if (diffs.length > 0) throw new Error(`${NAMES[t.id]} and Knot disagree:\n${diffs.join("\n")}`);
  }
  log("answers: every server agrees with Knot on the first 2000 queries of the mix");

  for (const t of targets) await dnsperf({ port: t.port, queryFile, seconds: 2, core }); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const cpuBefore = cpuSecondsOf(t.server.proc.pid);
      const r = await dnsperf({ port: t.port, queryFile, seconds, core });
      t.runs.push(r);
      t.cpu.push(((cpuSecondsOf(t.server.proc.pid) - cpuBefore) * 1e6) / r.completed);
      log(
        `round ${round + 1}: ${t.id} ${Math.round(r.qps)} QPS, ${t.cpu.at(-1)!.toFixed(1)} us CPU per query`,
      );
    }
  }
  for (const t of targets) {
    t.fixed = await dnsperf({ port: t.port, queryFile, seconds, core, maxQps: fixedRate, percentiles: true });
  }
  const memory = targets.map((t) => memoryOf(t.server.proc.pid));
  for (const t of targets) await stop(t.server.proc);
  if (!chosen.has("knot")) await stop(knot.proc);
  await api.close();
  report(targets, memory);
}

function report(targets: Target[], memory: { rss: number; peak: number }[]): void {
  const qps = new Map(targets.map((t) => [t.id, median(t.runs.map((r) => r.qps))]));
  const cpu = new Map(targets.map((t) => [t.id, median(t.cpu)]));
  const ratio = (t: Target, anchor: Id) => {
    const a = qps.get(anchor);
    return a === undefined ? "-" : (qps.get(t.id)! / a).toFixed(2);
  };
  const lines = [
    "",
    `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, Node ${process.version}, ` +
      `${services} services, ${rounds} rounds of ${seconds}s per server (median shown)` +
      (PIN ? ", servers on core 0, dnsperf on core 1" : ""),
    "",
    `| server | QPS (median) | QPS per round | vs minimal Node | vs miekg/dns | vs Knot | CPU us/query | p50 / p99 ms at ${fixedRate} QPS | lost | RSS MB (peak) |`,
    "|---|---|---|---|---|---|---|---|---|---|",
    ...targets.map((t, i) => {
      const f = t.fixed;
      const lat = f ? `${f.p50Ms!.toFixed(3)} / ${f.p99Ms!.toFixed(3)}` : "-";
      const lost = t.runs.reduce((n, r) => n + r.lost, 0);
      return `| ${NAMES[t.id]} | ${Math.round(qps.get(t.id)!)} | ${t.runs.map((r) => Math.round(r.qps)).join(" / ")} | ${ratio(t, "minimal")} | ${ratio(t, "miekg")} | ${ratio(t, "knot")} | ${cpu.get(t.id)!.toFixed(1)} | ${lat} | ${lost} | ${memory[i].rss.toFixed(0)} (${memory[i].peak.toFixed(0)}) |`;
    }),
  ];
  const minimal = targets.find((t) => t.id === "minimal");
  const miekg = targets.find((t) => t.id === "miekg");
  const knot = targets.find((t) => t.id === "knot");
  for (const id of ["kubeadm", "kubeadm-dgram"] as const) {
    const main = targets.find((t) => t.id === id);
    if (!main || !minimal || !miekg) continue;
    const q = qps.get(id)!;
    const p99 = main.fixed!.p99Ms! / minimal.fixed!.p99Ms!;
    lines.push(
      "",
      `Targets, ${NAMES[id]}: QPS ${(q / qps.get("minimal")!).toFixed(2)}x the minimal Node server (>= 0.9), ` +
        `${(q / qps.get("miekg")!).toFixed(2)}x the miekg/dns server (>= 1.0); p99 at ${fixedRate} QPS ` +
        `${p99.toFixed(2)}x the minimal Node server's (<= 2.0).`,
    );
  }
  for (const [id, want] of [
    ["lean", 1.0],
    ["kubeadm", 0.75],
  ] as const) {
    if (!knot || !qps.has(id)) continue;
    lines.push(
      `Target, ${NAMES[id]}: QPS ${(qps.get(id)! / qps.get("knot")!).toFixed(2)}x Knot (>= ${want}).`,
    );
  }
  process.stdout.write(lines.join("\n") + "\n");
}

function log(s: string): void {
  process.stderr.write(`[bench] ${s}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
