// The benchmark: a generated cluster (bench/cluster-gen.ts, 10k services by default) served by
// clusterdns through the test API server, by Knot DNS from the equivalent zone file, and a bare Node UDP
// echo server as the floor of Node's own I/O. One run, servers pinned to core 0, dnsperf to core 1.
// Answers are compared with Knot's before any load. Rounds alternate between the servers so a slow
// minute of a shared machine hits all alike; the table shows each server's median round.
//   npm run bench
//   BENCH_SERVICES=1000 BENCH_SECONDS=5 BENCH_ROUNDS=3 npm run bench
// Needs dnsperf, knotd and taskset (Debian: dnsperf, knot, util-linux).

import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dnsperf, type PerfResult } from "./dnsperf.ts";
import { generateCluster } from "./cluster-gen.ts";
import { serveWithCorefile, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import { startKnot } from "./knot.ts";
import { compareAnswers } from "./answer-check.ts";
import { PIN, cpuSecondsOf, memoryOf, startPinned, stop, type Started } from "./processes.ts";

const ROOT = resolve(import.meta.dirname, "..");
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const services = env("BENCH_SERVICES", 10_000);
const seconds = env("BENCH_SECONDS", 10);
const rounds = env("BENCH_ROUNDS", 3);
const fixedRate = env("BENCH_FIXED_QPS", 10_000);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-"));
const core = PIN ? 1 : undefined;

interface Target {
  name: string;
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

  const { api, corefile } = await serveWithCorefile(cluster, dir);
  const { cd, port: cdPort } = await startClusterdns(corefile);
  await untilSynced(cd);
  const knotPort = freeUdpPort();
  const knot = await startKnot("cluster.local", zoneFile, knotPort);
  const echoPort = freeUdpPort();
  const echo = await startPinned(
    process.execPath,
    [join(ROOT, "bench", "echo-server.ts"), String(echoPort)],
    /echo listening/,
  );

  const diffs = await compareAnswers(cluster.queries.slice(0, 2000), cdPort, knotPort);
  if (diffs.length > 0) throw new Error(`clusterdns and Knot disagree:\n${diffs.join("\n")}`);
  log("answers: clusterdns and Knot agree on the first 2000 queries of the mix");

  const targets: Target[] = [
    { name: "clusterdns", port: cdPort, server: cd, runs: [], cpu: [] },
    { name: "Knot DNS 1 UDP worker", port: knotPort, server: knot, runs: [], cpu: [] },
    { name: "bare Node UDP echo", port: echoPort, server: echo, runs: [], cpu: [] },
  ];
  for (const t of targets) await dnsperf({ port: t.port, queryFile, seconds: 2, core }); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const cpuBefore = cpuSecondsOf(t.server.proc.pid);
      const r = await dnsperf({ port: t.port, queryFile, seconds, core });
      t.runs.push(r);
      t.cpu.push(((cpuSecondsOf(t.server.proc.pid) - cpuBefore) * 1e6) / r.completed);
      log(
        `round ${round + 1}: ${t.name} ${Math.round(r.qps)} QPS, ${t.cpu.at(-1)!.toFixed(1)} us CPU per query`,
      );
    }
  }
  // The echo too: its latency is the floor of Node's own I/O path, as its QPS is.
  for (const t of targets) {
    t.fixed = await dnsperf({ port: t.port, queryFile, seconds, core, maxQps: fixedRate, percentiles: true });
  }
  const memory = targets.map((t) => memoryOf(t.server.proc.pid));
  for (const t of targets) await stop(t.server.proc);
  await api.close();
  report(targets, memory);
}

function report(targets: Target[], memory: { rss: number; peak: number }[]): void {
  const qps = targets.map((t) => median(t.runs.map((r) => r.qps)));
  const [cd, knot, echo] = qps;
  const cpu = targets.map((t) => median(t.cpu));
  const p50vsKnot = (i: number) => (targets[i].fixed!.p50Ms! / targets[1].fixed!.p50Ms!).toFixed(2);
  const lines = [
    "",
    `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, Node ${process.version}, ` +
      `${services} services, ${rounds} rounds of ${seconds}s per server (median shown)` +
      (PIN ? ", servers on core 0, dnsperf on core 1" : ""),
    "",
    `| server | QPS (median) | QPS per round | vs Knot | vs echo | CPU us/query (vs echo) | p50 / p99 ms at ${fixedRate} QPS | lost | RSS MB (peak) |`,
    "|---|---|---|---|---|---|---|---|---|",
    ...targets.map((t, i) => {
      const f = t.fixed;
      const lat = f ? `${f.p50Ms!.toFixed(3)} / ${f.p99Ms!.toFixed(3)}` : "-";
      const lost = t.runs.reduce((n, r) => n + r.lost, 0);
      return `| ${t.name} | ${Math.round(qps[i])} | ${t.runs.map((r) => Math.round(r.qps)).join(" / ")} | ${(qps[i] / knot).toFixed(2)} | ${(qps[i] / echo).toFixed(2)} | ${cpu[i].toFixed(1)} (${(cpu[i] / cpu[2]).toFixed(2)}) | ${lat} | ${lost} | ${memory[i].rss.toFixed(0)} (${memory[i].peak.toFixed(0)}) |`;
    }),
    "",
    `clusterdns / Knot: ${(cd / knot).toFixed(2)} QPS; p50 ${p50vsKnot(0)}x Knot's at ${fixedRate} QPS (the echo's: ${p50vsKnot(2)}x). clusterdns / echo: ${(cd / echo).toFixed(2)}. ` +
      `CPU per query: clusterdns ${(cpu[0] / cpu[1]).toFixed(2)}x Knot's, ${(cpu[0] / cpu[2]).toFixed(2)}x the echo's.`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

function log(s: string): void {
  process.stderr.write(`[bench] ${s}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
