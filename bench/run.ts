// The benchmark: a generated cluster (bench/cluster-gen.ts, 10k services by default) served, in one run,
// on three query mixes (bench/mixes.ts: hot, over-capacity, unique names), by
//   - clusterdns through the test API server, on kubeadm's whole Corefile (the main row: `cache 30` in
//     the same block as `kubernetes`, as most clusters run it) with the batched engine and with dgram,
//     and on `kubernetes` alone (a trimmed Corefile, labelled so); also, when asked, on kubeadm's
//     current default (its cache skips cluster.local) and `kubernetes` alone on dgram;
//   - Knot DNS with one UDP worker, from the equivalent zone file;
//   - two anchors replaying Knot's precomputed answers to every distinct question of the mix: a minimal
//     Node server (Node's floor for a DNS server) and a miekg/dns server (CoreDNS's own library with no
//     plugins); when asked, a bare Node UDP echo (Node's own I/O floor, no DNS at all).
// Every pass starts each server afresh (the hot mix then warms it up for 2 s; the others start cold),
// and so does the fixed-rate pass that reads latency. Servers are pinned to core 0, dnsperf (-c 4
// -q 100) to core 1. Passes alternate between the servers so a slow minute of a shared machine hits all
// alike; the tables show medians. Each server's answers to the first 2000 queries of each mix are
// compared with Knot's after its first pass. bench/report.ts prints the tables and the targets.
//   npm run bench                                        (every mix, the default servers: ~20 minutes)
//   BENCH_MIXES=over,unique BENCH_SERVERS=kubeadm,minimal,miekg BENCH_SECONDS=5 npm run bench
//   BENCH_MIXES=over BENCH_SERVERS=kubeadm BENCH_ROUNDS=1 BENCH_FIXED_QPS=0 \
//     BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench     (one server, one mix)
// BENCH_WORKERS=2 runs every server on two workers (clusterdns -workers 2, Knot udp-workers 2, miekg/dns
// GOMAXPROCS=2 on two SO_REUSEPORT sockets, the minimal server on two threads), unpinned: servers and
// dnsperf (-c 8, BENCH_SOCKETS) share both cores. BENCH_WORKERS=1,2 runs both in one run, and the
// targets then compare them (CPU and RSS of 2 workers against 1). The default, 1, is the pinned run.
//   BENCH_MIXES=over BENCH_ROUNDS=1 BENCH_SECONDS=3 BENCH_WORKERS=1,2 npm run bench     (a short check)
// Knobs: BENCH_SERVICES (10000), BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_FIXED_QPS (10000; 0 skips
// the fixed-rate pass), BENCH_MIXES, BENCH_SERVERS, BENCH_NODE_FLAGS (added to clusterdns's node flags).
// Needs dnsperf, knotd, taskset, go and miekg/dns (Debian: dnsperf, knot, util-linux, golang-go,
// golang-github-miekg-dns-dev).

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { generateCluster, type Cluster } from "./cluster-gen.ts";
import { serveWithCorefiles } from "./clusterdns-run.ts";
import { startKnot } from "./knot.ts";
import { compareAnswers } from "./answer-check.ts";
import { precomputeAnswers } from "./precompute.ts";
import { writeAnswers } from "./answers-file.ts";
import { buildMiekg } from "./miekg.ts";
import { MIXES, mixQueries, mixShape, type MixId } from "./mixes.ts";
import { CLUSTERDNS, SERVERS, SERVER_NAMES, runPass, type Load, type ServerId, type Setup } from "./pass.ts";
import { mixTable, targets, type Measured, type Results } from "./report.ts";
import { issueTargets, rssSplitLines } from "./targets.ts";
import { PIN, setPinning, stop } from "./processes.ts";
import { freeUdpTcpPort } from "../test/helpers/free-port.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const services = env("BENCH_SERVICES", 10_000);
const seconds = env("BENCH_SECONDS", 10);
const rounds = env("BENCH_ROUNDS", 3);
const fixedQps = env("BENCH_FIXED_QPS", 10_000);
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);

const DEFAULT_SERVERS: ServerId[] = ["kubeadm", "kubeadm-dgram", "lean", "knot", "minimal", "miekg"];
const list = <T extends string>(name: string, all: readonly T[], fallback: readonly T[]): T[] =>
  (process.env[name]?.split(",") ?? fallback).map((x) => {
    if (!(all as readonly string[]).includes(x))
      throw new Error(`${name}: unknown '${x}' (${all.join(", ")})`);
    return x as T;
  });
const servers = list("BENCH_SERVERS", SERVERS, DEFAULT_SERVERS);
const mixes = list("BENCH_MIXES", MIXES, MIXES);
const workerCounts = (process.env.BENCH_WORKERS ?? "1").split(",").map((x) => {
  const n = Number(x);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_WORKERS: '${x}' is not a count of workers`);
  return n;
});
const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-"));

async function main(): Promise<void> {
  const load = loadavg();
  const cluster = generateCluster({ services });
  const zoneFile = join(dir, "cluster.local.zone");
  writeFileSync(zoneFile, cluster.zone + cluster.podRecords);
  log(`cluster: ${JSON.stringify(cluster.counts)}`);

  // The reference Knot: the answers are checked against it, the anchors replay its replies, and it is
  // forward's upstream. The Knot row of the tables is a fresh Knot per pass, like every other row.
  const knotPort = await freeUdpTcpPort();
  const knot = await startKnot("cluster.local", zoneFile, knotPort);
  const needed = [...new Set(servers.flatMap((id) => CLUSTERDNS[id]?.[0] ?? []))];
  const { api, corefiles } = await serveWithCorefiles(cluster, dir, needed, knotPort);
  const miekgBin = servers.includes("miekg") ? buildMiekg() : undefined;

  const byWorkers = new Map<number, Results>();
  try {
    for (const workers of workerCounts) {
      // One worker: servers on core 0, dnsperf on core 1. More: nothing pinned, all share both cores.
      setPinning(workers === 1);
      const setup: Setup = { corefiles, zoneFile, miekgBin, nodeFlags, workers };
      const results: Results = new Map();
      for (const mix of mixes) results.set(mix, await runMix(mix, cluster, setup, knotPort));
      byWorkers.set(workers, results);
    }
  } finally {
    await stop(knot.proc);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const minutes = (performance.now() - began) / 60_000;
  const lines = [
    "",
    `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ` +
      `Node ${process.version}, ${services} services, ${rounds} pass${rounds === 1 ? "" : "es"} of ${seconds} s per server and mix ` +
      `(median shown), each on a freshly started server` +
      `; ${workerCounts.map(pinningText).join("; ")}` +
      `; load average ${load[0].toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; ` +
      `the run took ${minutes.toFixed(1)} min` +
      (nodeFlags.length > 0 ? `; clusterdns with ${nodeFlags.join(" ")}` : ""),
  ];
  for (const [workers, results] of byWorkers) {
    for (const [mix, rows] of results) lines.push(...mixTable(mix, rows, { fixedQps, workers }));
  }
  lines.push(...issueTargets(byWorkers, services, fixedQps), ...rssSplitLines(byWorkers));
  const one = byWorkers.get(1);
  if (one) lines.push(...targets(one, services, fixedQps));
  process.stdout.write(lines.join("\n") + "\n");
}

async function runMix(
  mix: MixId,
  cluster: Cluster,
  setup: Setup,
  knotPort: number,
): Promise<Map<ServerId, Measured>> {
  const queries = mixQueries(cluster, mix);
  const queryFile = join(dir, `queries-${mix}.txt`);
  writeFileSync(queryFile, queries.join("\n") + "\n");
  const shape = mixShape(queries);
  log(
    `${setup.workers} worker(s), ${mix}: ${queries.length} queries, ${shape.distinct} distinct, ${shape.once} of them asked once`,
  );
  const load: Load = { mix, queryFile, queries: queries.length, seconds };
  if (servers.includes("minimal") || servers.includes("miekg")) {
    load.answersFile = join(dir, `answers-${mix}.bin`);
    if (!existsSync(load.answersFile)) {
      writeFileSync(load.answersFile, writeAnswers(await precomputeAnswers(knotPort, queries)));
    }
  }
  // Answers are compared with the reference Knot's after a server's first pass, on the same process.
  const check = (id: ServerId) => async (port: number) => {
    // The anchors replay answers to queries without EDNS, which is how dnsperf asks.
    const edns = id !== "minimal" && id !== "miekg";
    const diffs = await compareAnswers(queries.slice(0, 2000), port, knotPort, { edns });
    if (diffs.length > 0) throw new Error(`${SERVER_NAMES[id]} and Knot disagree:\n${diffs.join("\n")}`);
  };
  const rows = new Map<ServerId, Measured>(servers.map((id) => [id, { passes: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const [id, m] of rows) {
      const checked = round === 0 && id !== "knot" && !id.startsWith("echo");
      const r = await runPass(id, setup, load, checked ? check(id) : undefined);
      m.passes.push(r);
      log(
        `${mix} pass ${round + 1}: ${id} ${Math.round(r.qps)} QPS, ${r.cpuUs.toFixed(1)} us CPU per query` +
          (r.heapPerQuery === undefined ? "" : `, ${r.heapPerQuery.toFixed(0)} B heap per query`) +
          (checked ? ", answers agree with Knot's" : ""),
      );
    }
  }
  if (fixedQps > 0) {
    for (const [id, m] of rows) {
      m.fixed = await runPass(id, setup, { ...load, fixedQps });
      log(
        `${mix} at ${fixedQps} QPS: ${id} p50 ${m.fixed.p50Ms!.toFixed(3)} ms, p99 ${m.fixed.p99Ms!.toFixed(3)} ms`,
      );
    }
  }
  return rows;
}

const began = performance.now();

/** How a worker count's passes ran, for the run's header. */
function pinningText(workers: number): string {
  if (workers > 1) {
    return `${workers} workers: nothing pinned, servers and dnsperf (-c ${process.env.BENCH_SOCKETS ?? 8} -q 100) share all ${cpus().length} cores`;
  }
  return PIN
    ? "1 worker: servers on core 0, dnsperf -c 4 -q 100 on core 1"
    : "1 worker: nothing pinned (BENCH_PIN=0)";
}

function log(s: string): void {
  const t = Math.round((performance.now() - began) / 1000);
  process.stderr.write(`[bench ${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}] ${s}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
