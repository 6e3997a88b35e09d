// One clusterdns process on a generated cluster behind the test API server, as the benchmarks run it,
// and the probes they share: start to synced, and API write to new answer (propagation).

import dgram from "node:dgram";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestApiServer } from "../test/k8s/api-server.ts";
import { benchCorefile, serveCluster, type BenchCorefile } from "./cluster-api.ts";
import { generateCluster, type Cluster as GeneratedCluster } from "./cluster-gen.ts";
import {
  IMAGE_ENV,
  NODE_FLAGS,
  cpuSecondsOf,
  listeningTcpPorts,
  startPinned,
  type Started,
} from "./processes.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { newQuery } from "../src/dns/message.ts";
import { Type } from "../src/dns/constants.ts";
import type { KService } from "../src/plugins/kubernetes/model/source.ts";

const ROOT = resolve(import.meta.dirname, "..");
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A clusterdns process started on a cluster, and how long it took. */
export interface Launched {
  cd: Started;
  port: number;
  /** From spawning clusterdns to its "started" line (listening), ms. */
  startToListeningMs: number;
  /** From spawning clusterdns to its "synced" line (/ready turns 200), ms (polled every 10 ms). */
  startToSyncedMs: number;
  /** CPU seconds clusterdns used from its start to the "synced" line: its own share of the start, apart
   * from the time it waited for the API. */
  cpuToSyncedS: number;
}

export interface Running extends Launched {
  api: TestApiServer;
  /** From the last LIST request reaching the API to the "synced" line, ms. */
  listToSyncedMs: number;
}

/** Where `forward` sends outside names when a benchmark asks only cluster names: the discard port,
 * where nothing listens on loopback (the `loop` plugin's start-up probe gets its error and moves on). */
export const NO_UPSTREAM = 9;

/** Which Corefile the single-server benchmarks use: BENCH_COREFILE, kubeadm's whole one by default. */
export const benchCorefileChoice = (): BenchCorefile => {
  const v = process.env.BENCH_COREFILE ?? "kubeadm";
  if (v !== "kubeadm" && v !== "kubeadm-disable" && v !== "lean") {
    throw new Error(`BENCH_COREFILE=${v}: want kubeadm, kubeadm-disable or lean`);
  }
  return v;
};

/** Serves the cluster through the test API server and writes one Corefile per choice that reaches it,
 * forwarding outside names to `upstreamPort` on loopback. */
export async function serveWithCorefiles(
  cluster: GeneratedCluster,
  dir: string,
  which: readonly BenchCorefile[],
  upstreamPort = NO_UPSTREAM,
): Promise<{ api: TestApiServer; corefiles: Record<BenchCorefile, string>; kubeconfig: string }> {
  const { api, kubeconfig } = await serveCluster(cluster.objects, dir);
  const corefiles = {} as Record<BenchCorefile, string>;
  for (const w of which) {
    corefiles[w] = join(dir, `Corefile.${w}`);
    writeFileSync(corefiles[w], benchCorefile(w, kubeconfig, upstreamPort));
  }
  return { api, corefiles, kubeconfig };
}

/** serveWithCorefiles with the one Corefile BENCH_COREFILE names. */
export async function serveWithCorefile(
  cluster: GeneratedCluster,
  dir: string,
): Promise<{ api: TestApiServer; corefile: string; variant: (vars: Record<string, string>) => string }> {
  const which = benchCorefileChoice();
  const { api, corefiles, kubeconfig } = await serveWithCorefiles(cluster, dir, [which]);
  // The same Corefile with other BENCH_* choices (BENCH_INSIGHTS, BENCH_TRACE), for A/B runs.
  const variant = (vars: Record<string, string>): string => {
    const saved = Object.keys(vars).map((k) => [k, process.env[k]] as const);
    Object.assign(process.env, vars);
    const file = join(dir, `Corefile.${which}.${Object.entries(vars).flat().join("_")}`);
    writeFileSync(file, benchCorefile(which, kubeconfig, NO_UPSTREAM));
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    return file;
  };
  return { api, corefile: corefiles[which], variant };
}

export interface StartOptions {
  /** -udp.engine; BENCH_UDP_ENGINE, else clusterdns's own choice (batched where the addon is built). */
  engine?: "dgram" | "batched";
  /** The checkout whose bin/clusterdns runs (this one by default). */
  checkout?: string;
  /** Node flags after the image's. */
  nodeFlags?: string[];
  /** clusterdns flags after the benchmark's (-workers 2, ...). */
  args?: string[];
  env?: Record<string, string>;
}

/** Starts clusterdns on a Corefile, pinned, and resolves with its DNS port once it logged "started". */
export async function startClusterdns(
  corefile: string,
  o: StartOptions = {},
): Promise<{ cd: Started; port: number }> {
  const cd = await startPinned(
    process.execPath,
    [
      ...NODE_FLAGS,
      ...(o.nodeFlags ?? []),
      join(o.checkout ?? ROOT, "bin", "clusterdns"),
      "-conf",
      corefile,
      "-dns.port",
      "0",
      ...((o.engine ?? process.env.BENCH_UDP_ENGINE)
        ? ["-udp.engine", o.engine ?? process.env.BENCH_UDP_ENGINE!]
        : []),
      ...(o.args ?? []),
    ],
    /"msg":"started"/,
    { CLUSTERDNS_LOG_LEVEL: "info", ...IMAGE_ENV, ...o.env },
  );
  const port = /"ports":\[(\d+)/.exec(cd.line)?.[1];
  if (port === undefined) throw new Error("clusterdns printed no ports");
  return { cd, port: Number(port) };
}

/** Resolves once clusterdns logged its first sync, polling every 10 ms; 5 minutes at most. */
export async function untilSynced(cd: Started): Promise<void> {
  for (let i = 0; i < 30_000 && !cd.lines.some((l) => l.includes('"msg":"synced"')); i++) await sleep(10);
}

/** The answer cache's counters of a clusterdns process, from its prometheus listener. */
export interface CacheCounters {
  hits: number;
  misses: number;
}

const HITS = /^clusterdns_answer_cache_hits_total (\d+)/m;
const MISSES = /^clusterdns_answer_cache_misses_total (\d+)/m;

/** The /metrics URL of a clusterdns process whose Corefile has `prometheus` on port 0: the one of its
 * listening TCP ports (its DNS port aside) that serves the answer cache's counters; else undefined. */
export async function metricsUrl(pid: number, dnsPort: number): Promise<string | undefined> {
  for (const port of listeningTcpPorts(pid)) {
    if (port === dnsPort) continue;
    const url = `http://127.0.0.1:${port}/metrics`;
    if ((await answerCacheCounters(url)) !== undefined) return url;
  }
  return undefined;
}

/** The counters at `url`; undefined when it does not serve them. */
export async function answerCacheCounters(url: string): Promise<CacheCounters | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    const hits = HITS.exec(text)?.[1];
    const misses = MISSES.exec(text)?.[1];
    return hits === undefined || misses === undefined
      ? undefined
      : { hits: Number(hits), misses: Number(misses) };
  } catch {
    return undefined;
  }
}

/** Starts clusterdns on a Corefile and waits until it synced (at most 5 minutes), timing both. */
async function startTimed(corefile: string): Promise<Launched & { syncedAt: number }> {
  const t0 = performance.now();
  const { cd, port } = await startClusterdns(corefile);
  const listening = performance.now();
  await untilSynced(cd);
  const syncedAt = performance.now();
  return {
    cd,
    port,
    startToListeningMs: listening - t0,
    startToSyncedMs: syncedAt - t0,
    cpuToSyncedS: cpuSecondsOf(cd.proc.pid),
    syncedAt,
  };
}

/** Serves the cluster, starts clusterdns on it and waits until it synced (at most 5 minutes). */
/** A generated cluster of `services` services served through the test API server, clusterdns synced on
 * it, and the cluster's hot mix written to a file for dnsperf: what the memory runs start from. */
export async function runWithQueries(
  services: number,
  prefix: string,
): Promise<{ cluster: GeneratedCluster; r: Running; queryFile: string }> {
  const cluster = generateCluster({ services });
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const queryFile = join(dir, "queries.txt");
  writeFileSync(queryFile, cluster.queries.join("\n") + "\n");
  return { cluster, r: await runOnCluster(cluster, dir), queryFile };
}

export async function runOnCluster(cluster: GeneratedCluster, dir: string): Promise<Running> {
  const { api, corefile } = await serveWithCorefile(cluster, dir);
  const { syncedAt, ...started } = await startTimed(corefile);
  const lastList = Math.max(...api.requests.filter((r) => !r.watch && r.query.limit).map((r) => r.at));
  return { api, ...started, listToSyncedMs: syncedAt - lastList };
}

/** Writes the cluster to a JSON file and starts clusterdns reading it with `objects`, in the
 * Corefile BENCH_COREFILE names, until it synced. */
export async function runOnObjects(cluster: GeneratedCluster, dir: string): Promise<Launched> {
  const file = join(dir, "objects.json");
  writeFileSync(file, JSON.stringify({ kind: "List", apiVersion: "v1", items: cluster.objects }));
  const corefile = join(dir, "Corefile.objects");
  writeFileSync(corefile, benchCorefile(benchCorefileChoice(), "", NO_UPSTREAM, `objects ${file}`));
  const { syncedAt: _, ...started } = await startTimed(corefile);
  return started;
}

/** Gives `changes` ClusterIP services new addresses one after another and times, for each, the API
 * write to the first answer with the new address (asked over UDP every millisecond, 5 s at most). */
export async function propagation(r: Running, cluster: GeneratedCluster, changes: number): Promise<number[]> {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((done) => sock.bind(0, "127.0.0.1", done));
  let waiting: ((addr: string) => void) | undefined;
  sock.on("message", (buf) => {
    const rr = decode(buf).answer[0];
    if (rr && "address" in rr.data) waiting?.(rr.data.address);
  });
  const ask = (name: string) =>
    new Promise<string>((done) => {
      const timer = setTimeout(() => done(""), 50);
      waiting = (addr) => {
        clearTimeout(timer);
        done(addr);
      };
      sock.send(encode(newQuery(name, Type.A)), r.port, "127.0.0.1");
    });
  const targets = cluster.objects.filter(
    (o): o is KService => (o as KService).kind === "Service" && (o as KService).spec?.type === "ClusterIP",
  );
  const times: number[] = [];
  for (let i = 0; i < changes; i++) {
    const svc = targets[(i * 7919) % targets.length];
    const name = `${svc.metadata!.name}.${svc.metadata!.namespace}.svc.cluster.local.`;
    const ip = `10.${100 + (i >> 8)}.${i & 255}.${7}`;
    svc.spec!.clusterIP = ip;
    svc.spec!.clusterIPs = [ip];
    const start = performance.now();
    r.api.update("services", svc);
    let seen = false;
    while (!seen && performance.now() - start < 5000) {
      seen = (await ask(name)) === ip;
      if (!seen) await sleep(1);
    }
    times.push(seen ? performance.now() - start : Infinity);
    await sleep(10);
  }
  sock.close();
  return times.sort((a, b) => a - b);
}

/** CoreDNS's published memory need for a cluster, MB: (pods + services) / 1000 + 54. */
export const corednsFormulaMb = (c: { pods: number; services: number }) =>
  Math.round((c.pods + c.services) / 1000 + 54);

/** The q-quantile of sorted times, in ms with one decimal. */
export const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
