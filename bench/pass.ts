// One pass of the benchmark: a freshly started server, loaded by dnsperf with one mix, measured, and
// stopped. Every pass of every server starts a new process, so no pass inherits another's cache or heap.

import { join, resolve } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import type { BenchCorefile } from "./cluster-api.ts";
import { answerCacheCounters, metricsUrl, sleep, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import { startKnot } from "./knot.ts";
import { startMiekg } from "./miekg.ts";
import type { MixId } from "./mixes.ts";
import { GC_TRACE_FLAG, allocatedIn } from "./gc-alloc.ts";
import {
  NODE_FLAGS,
  cpuSecondsOf,
  memoryOf,
  pinning,
  resetPeak,
  rssSplitOf,
  sampleRssSplit,
  startPinned,
  stop,
  type RssSplit,
  type Started,
} from "./processes.ts";
import { freeUdpTcpPort } from "../test/helpers/free-port.ts";

const ROOT = resolve(import.meta.dirname, "..");

export const SERVERS = [
  "kubeadm",
  "kubeadm-dgram",
  "kubeadm-disable",
  "lean",
  "lean-dgram",
  "knot",
  "minimal",
  "miekg",
  "echo",
  "echo-batched",
] as const;
export type ServerId = (typeof SERVERS)[number];

export const SERVER_NAMES: Record<ServerId, string> = {
  kubeadm: "clusterdns, kubeadm Corefile (`cache 30`)",
  "kubeadm-dgram": "clusterdns, kubeadm Corefile (`cache 30`), dgram engine",
  "kubeadm-disable": "clusterdns, kubeadm Corefile of 1.31+ (cache skips cluster.local)",
  lean: "clusterdns, `kubernetes` only (trimmed)",
  "lean-dgram": "clusterdns, `kubernetes` only (trimmed), dgram engine",
  knot: "Knot DNS",
  minimal: "minimal Node server (precomputed answers)",
  miekg: "miekg/dns minimal server (precomputed answers)",
  echo: "bare Node UDP echo (no DNS)",
  "echo-batched": "bare Node UDP echo on clusterdns's batched engine (no DNS)",
};

/** A row's name with the workers it runs: clusterdns -workers N, Knot's udp-workers, miekg/dns's
 * GOMAXPROCS and SO_REUSEPORT sockets, the minimal server's threads. */
export function serverName(id: ServerId, workers: number): string {
  const n = workers === 1 ? "1 worker" : `${workers} workers`;
  if (id === "knot") return `Knot DNS, ${workers === 1 ? "1 UDP worker" : `${workers} UDP workers`}`;
  if (id === "miekg") return `${SERVER_NAMES[id]}, GOMAXPROCS=${workers}, ${workers} socket(s)`;
  if (id === "echo" || id === "echo-batched") return `${SERVER_NAMES[id]}, 1 thread`;
  return `${SERVER_NAMES[id]}, ${n}`;
}

/** Each clusterdns row: its Corefile and UDP engine (batched ships; dgram is Node's own). */
export const CLUSTERDNS: Partial<Record<ServerId, [BenchCorefile, "batched" | "dgram"]>> = {
  kubeadm: ["kubeadm", "batched"],
  "kubeadm-dgram": ["kubeadm", "dgram"],
  "kubeadm-disable": ["kubeadm-disable", "batched"],
  lean: ["lean", "batched"],
  "lean-dgram": ["lean", "dgram"],
};

/** The servers whose JS heap allocation is read from the GC trace. */
export const isNode = (id: ServerId) =>
  CLUSTERDNS[id] !== undefined || id === "minimal" || id === "echo" || id === "echo-batched";

/** What the servers of a run are started from. */
export interface Setup {
  corefiles: Partial<Record<BenchCorefile, string>>;
  /** The zone file Knot serves (the cluster's zone and its pods' records). */
  zoneFile: string;
  miekgBin?: string;
  /** Node flags for clusterdns after the image's (BENCH_NODE_FLAGS: a profiler, say). */
  nodeFlags: string[];
  /** Workers of every server (BENCH_WORKERS); above 1 nothing is pinned. */
  workers: number;
}

export interface Load {
  mix: MixId;
  queryFile: string;
  /** Queries in the file: with `seconds` it bounds how many passes over it dnsperf makes. */
  queries: number;
  /** Precomputed answers of the mix for the minimal and miekg/dns servers. */
  answersFile?: string;
  seconds: number;
  /** A fixed rate with latency percentiles, instead of full speed. */
  fixedQps?: number;
}

export interface PassResult {
  qps: number;
  completed: number;
  lost: number;
  /** Server CPU microseconds per answered query. */
  cpuUs: number;
  p50Ms?: number;
  p99Ms?: number;
  /** MiB: the peak up to the load (the start's), the peak under load, and the RSS when it ended. */
  startPeak: number;
  loadPeak: number;
  endRss: number;
  /** JS heap bytes allocated per answered query (bench/gc-alloc.ts), and of them what the load's edges'
   * extrapolation added; a bound when too few collections ran to read a rate (heapMeasured false). */
  heapPerQuery?: number;
  heapSlack?: number;
  heapMeasured?: boolean;
  /** RSS by kind after the start (clusterdns: synced), before the load, and at the highest RSS sampled
   * under load. */
  idleSplit?: RssSplit;
  peakSplit?: RssSplit;
  /** Answer cache hits over hits and misses in the measured window (clusterdns with prometheus). */
  hitRatio?: number;
}

/** Queries per second no server here reaches: with the run's seconds, a bound on the queries sent. */
const QPS_BOUND = 400_000;
const WARMUP_SECONDS = 2;
const STOP_GRACE_MS = 30_000;

/** Starts `id` afresh, loads it, measures, runs `check` on its port (answers compared, say), stops it. */
export async function runPass(
  id: ServerId,
  setup: Setup,
  load: Load,
  check?: (port: number) => Promise<void>,
): Promise<PassResult> {
  // Allocation is read in the full-speed passes; the fixed-rate one runs without the trace.
  const trace = load.fixedQps === undefined && isNode(id) ? [GC_TRACE_FLAG] : [];
  const { server, port } = await start(id, setup, load, trace);
  try {
    const pid = server.proc.pid!;
    const url = CLUSTERDNS[id] ? await metricsUrl(pid, port) : undefined;
    const startPeak = memoryOf(pid).peak;
    const idleSplit = rssSplitOf(pid);
    resetPeak(pid);
    const run = (seconds: number, fixedQps?: number) =>
      dnsperf({
        port,
        queryFile: load.queryFile,
        seconds,
        core: pinning() ? 1 : undefined,
        // Several client sockets (source ports), which SO_REUSEPORT spreads over the servers' sockets.
        sockets: setup.workers > 1 ? Number(process.env.BENCH_SOCKETS ?? 8) : undefined,
        maxRuns: Math.ceil((seconds * QPS_BOUND) / load.queries),
        maxQps: fixedQps,
        percentiles: fixedQps !== undefined,
      });
    // The hot mix measures the hit path: its warm-up fills the answer cache. The others start cold.
    if (load.mix === "hot") await run(WARMUP_SECONDS);
    const before = url === undefined ? undefined : await answerCacheCounters(url);
    const cpuBefore = cpuSecondsOf(pid);
    const sampler = sampleRssSplit(pid);
    const from = performance.now();
    const r = await run(load.seconds, load.fixedQps);
    const to = performance.now();
    const peakSplit = sampler.stop();
    const cpu = cpuSecondsOf(pid) - cpuBefore;
    await sleep(100); // the trace lines of the last collections
    const alloc = trace.length > 0 ? allocatedIn(server.lines, server.times, from, to, r.runMs) : undefined;
    const memory = memoryOf(pid);
    const after = url === undefined ? undefined : await answerCacheCounters(url);
    if (check) await check(port);
    const hits = before && after ? after.hits - before.hits : undefined;
    const misses = before && after ? after.misses - before.misses : undefined;
    return {
      qps: r.qps,
      completed: r.completed,
      lost: r.lost,
      cpuUs: (cpu * 1e6) / r.completed,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      startPeak,
      loadPeak: memory.peak,
      endRss: memory.rss,
      heapPerQuery: alloc && alloc.bytes / r.completed,
      heapSlack: alloc && alloc.extrapolated / r.completed,
      heapMeasured: alloc?.measured,
      idleSplit: idleSplit && { anon: idleSplit.anon, file: idleSplit.file, shmem: idleSplit.shmem },
      peakSplit,
      hitRatio: hits === undefined || misses === undefined ? undefined : hits / (hits + misses),
    };
  } finally {
    // Node flags (a profiler) write their output on a graceful exit, after the lameduck.
    await stop(server.proc, setup.nodeFlags.length > 0 ? STOP_GRACE_MS : 0);
  }
}

/** Starts a server and resolves once it answers (clusterdns: once synced) with its UDP port. */
async function start(
  id: ServerId,
  setup: Setup,
  load: Load,
  traceFlags: string[],
): Promise<{ server: Started; port: number }> {
  const clusterdns = CLUSTERDNS[id];
  if (clusterdns) {
    const [corefile, engine] = clusterdns;
    const { cd, port } = await startClusterdns(setup.corefiles[corefile]!, {
      engine,
      nodeFlags: [...traceFlags, ...setup.nodeFlags],
      args: ["-workers", String(setup.workers)],
    });
    await untilSynced(cd);
    return { server: cd, port };
  }
  if (id === "knot") {
    const port = await freeUdpTcpPort();
    return { server: await startKnot("cluster.local", setup.zoneFile, port, setup.workers), port };
  }
  let server: Started;
  if (id === "miekg") server = await startMiekg(setup.miekgBin!, load.answersFile!, setup.workers);
  else {
    const script =
      id === "minimal"
        ? ["minimal-server.ts", "0", load.answersFile!, String(setup.workers)]
        : ["echo-server.ts", "0", ...(id === "echo-batched" ? ["batched"] : [])];
    // The image's node flags, as clusterdns runs: the same young generation, and collections often
    // enough to read the allocation per query.
    const args = [...NODE_FLAGS, ...traceFlags, join(ROOT, "bench", script[0]), ...script.slice(1)];
    server = await startPinned(process.execPath, args, /listening on \d+/);
  }
  return { server, port: Number(/listening on (\d+)/.exec(server.line)![1]) };
}
