// A/B: two or more checkouts of clusterdns serve the benchmark's cluster from one test API server, and
// dnsperf loads them in alternating rounds, so a change is measured against its parent in one run.
// Each runs from its sources (no build needed in a worktree), or from its build (dist/, after npm run
// build there, as the image runs) with "::::CLUSTERDNS_FROM_SOURCE=0". Prints QPS and server CPU time
// per answered query for every round, and the medians.
//   git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   node bench/ab.ts /tmp/before .            (BENCH_SERVICES, BENCH_SECONDS, BENCH_ROUNDS, BENCH_MIX)
// A checkout may carry node flags after "::", added after the image's: `. .::--max-semi-space-size=4`,
// environment variables after a second "::": `. "::::MALLOC_ARENA_MAX=1"`, and clusterdns flags after a
// third: `. ".::::::-workers 2"`; BENCH_* variables among them choose the Corefile (`. ".::::BENCH_INSIGHTS=1"`). BENCH_PIN=0 leaves the servers and dnsperf unpinned (a server with
// -workers 2 has both cores); BENCH_SOCKETS sets dnsperf's sockets (-c, 4), which SO_REUSEPORT spreads
// over the threads by their source ports. The RSS of each server 2 s after its sync (before any query)
// and its peak (VmHWM) are printed at the end.
// With BENCH_FIXED_QPS=N the rounds run at that fixed rate instead and compare latency: p50 and p99
// per round (the tail is what garbage collection pauses show in).

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import { generateCluster } from "./cluster-gen.ts";
import { mixChoice, mixQueries } from "./mixes.ts";
import { serveWithCorefile, sleep, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import { PIN, cpuSecondsOf, memoryOf, stop, type Started } from "./processes.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const services = env("BENCH_SERVICES", 10_000);
const seconds = env("BENCH_SECONDS", 3);
const rounds = env("BENCH_ROUNDS", 4);
const checkouts = process.argv.slice(2).map((arg) => {
  const [path, flags = "", env = "", args = ""] = arg.split("::");
  const vars = env.split(" ").filter(Boolean);
  return {
    name: arg,
    path: resolve(path || "."),
    flags: flags.split(" ").filter(Boolean),
    args: args.split(" ").filter(Boolean),
    env: Object.fromEntries(vars.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])),
  };
});
if (checkouts.length < 2) {
  console.error("usage: node bench/ab.ts CHECKOUT CHECKOUT...");
  process.exit(2);
}
const core = PIN ? 1 : undefined;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Contender {
  name: string;
  server: Started;
  port: number;
  /** RSS (MiB) 2 s after the sync, before any query. */
  idle: number;
  qps: number[];
  cpu: number[];
  p50: number[];
  p99: number[];
}

const fixedQps = process.env.BENCH_FIXED_QPS ? Number(process.env.BENCH_FIXED_QPS) : undefined;

const dir = mkdtempSync(join(tmpdir(), "clusterdns-ab-"));
const cluster = generateCluster({ services });
const queryFile = join(dir, "queries.txt");
writeFileSync(queryFile, mixQueries(cluster, mixChoice()).join("\n") + "\n");
const { api, corefile, variant } = await serveWithCorefile(cluster, dir);
// A checkout's BENCH_* variables choose its own Corefile: `. "::::BENCH_INSIGHTS=1"` adds insights.
const corefileOf = (env: Record<string, string>) => {
  const vars = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("BENCH_")));
  return Object.keys(vars).length ? variant(vars) : corefile;
};

const contenders: Contender[] = [];
try {
  for (const checkout of checkouts) {
    const { cd: server, port } = await startClusterdns(corefileOf(checkout.env), {
      checkout: checkout.path,
      nodeFlags: checkout.flags,
      args: checkout.args,
      env: { CLUSTERDNS_FROM_SOURCE: "1", ...checkout.env },
    });
    await untilSynced(server);
    await sleep(2000);
    const idle = memoryOf(server.proc.pid).rss;
    // Warm-up: fills the answer cache (BENCH_WARM seconds; each thread of -workers fills its own).
    // BENCH_WARM=0: none, so the first round measures a fresh server, as the bench's passes do.
    const warm = env("BENCH_WARM", 2);
    if (warm > 0) await dnsperf({ port, queryFile, seconds: warm, core });
    contenders.push({ name: checkout.name, server, port, idle, qps: [], cpu: [], p50: [], p99: [] });
  }
  for (let round = 0; round < rounds; round++) {
    for (const c of contenders) {
      const before = cpuSecondsOf(c.server.proc.pid);
      const r = await dnsperf({
        port: c.port,
        queryFile,
        seconds,
        core,
        maxQps: fixedQps,
        sockets: process.env.BENCH_SOCKETS ? Number(process.env.BENCH_SOCKETS) : undefined,
        percentiles: !!fixedQps,
      });
      c.qps.push(r.qps);
      if (fixedQps) {
        c.p50.push(r.p50Ms!);
        c.p99.push(r.p99Ms!);
      }
      c.cpu.push(((cpuSecondsOf(c.server.proc.pid) - before) * 1e6) / r.completed);
    }
  }
  if (fixedQps) {
    console.log(
      `| checkout (${fixedQps} QPS) | p50 ms per round | p99 ms per round | p99 median (vs first) |`,
    );
    console.log(`|---|---|---|---|`);
    const first = median(contenders[0].p99);
    for (const c of contenders) {
      const p50 = c.p50.map((x) => x.toFixed(3)).join(" / ");
      const p99 = c.p99.map((x) => x.toFixed(2)).join(" / ");
      console.log(
        `| ${c.name} | ${p50} | ${p99} | ${median(c.p99).toFixed(2)} (${(median(c.p99) / first).toFixed(2)}) |`,
      );
    }
    process.exitCode = 0;
  }
  const base = median(contenders[0].cpu);
  console.log(`| checkout | QPS per round | CPU us/query per round | CPU median (vs first) |`);
  console.log(`|---|---|---|---|`);
  for (const c of contenders) {
    const q = c.qps.map((x) => x.toFixed(0)).join(" / ");
    const u = c.cpu.map((x) => x.toFixed(1)).join(" / ");
    console.log(
      `| ${c.name} | ${q} | ${u} | ${median(c.cpu).toFixed(1)} (${(median(c.cpu) / base).toFixed(2)}) |`,
    );
  }
  for (const c of contenders) {
    const m = memoryOf(c.server.proc.pid);
    console.log(
      `${c.name}: RSS idle after sync ${c.idle.toFixed(1)} MiB, at the end ${m.rss.toFixed(1)} MiB, peak ${m.peak.toFixed(1)} MiB`,
    );
  }
} finally {
  for (const c of contenders) await stop(c.server.proc);
  await api.close();
}
