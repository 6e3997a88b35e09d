// Runs dnsperf (Debian's dnsperf) and reads its summary. As the benchmark runs it: 4 clients (sockets),
// 100 queries outstanding, UDP, no EDNS; bounded in time (-l) and in passes over the query file (-n).

import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PerfResult {
  qps: number;
  sent: number;
  completed: number;
  lost: number;
  avgLatencyMs: number;
  /** From the first query sent to the end of the run, as dnsperf reports it. */
  runMs: number;
  /** Latency percentiles in ms, from dnsperf -v's per-query lines (only with `percentiles`). */
  p50Ms?: number;
  p99Ms?: number;
}

export interface PerfOptions {
  port: number;
  /** The server's address (default 127.0.0.1; "::1" to ask over IPv6). */
  server?: string;
  queryFile: string;
  seconds: number;
  /** Core to pin dnsperf to (taskset -c). */
  core?: number;
  /** Outstanding queries (-q, 100). */
  outstanding?: number;
  /** Clients, each its own socket (-c, 4). */
  sockets?: number;
  /** Passes over the query file at most (-n); unbounded by count when left out. */
  maxRuns?: number;
  /** Fixed rate, for latency runs. */
  maxQps?: number;
  /** Read every query's latency (dnsperf -v) for percentiles: for fixed-rate runs only. */
  percentiles?: boolean;
}

export async function dnsperf(o: PerfOptions): Promise<PerfResult> {
  const args = [
    "-s",
    o.server ?? "127.0.0.1",
    "-p",
    String(o.port),
    "-d",
    o.queryFile,
    "-l",
    String(o.seconds),
    "-q",
    String(o.outstanding ?? 100),
    "-c",
    String(o.sockets ?? 4),
  ];
  if (o.maxRuns) args.push("-n", String(o.maxRuns));
  if (o.maxQps) args.push("-Q", String(o.maxQps));
  if (o.percentiles) args.push("-v");
  const cmd = o.core === undefined ? "dnsperf" : "taskset";
  const full = o.core === undefined ? args : ["-c", String(o.core), "dnsperf", ...args];
  const { stdout } = await run(cmd, full, { timeout: (o.seconds + 30) * 1000, maxBuffer: 1 << 30 });
  const num = (re: RegExp) => Number(re.exec(stdout)?.[1] ?? NaN);
  return {
    qps: num(/Queries per second:\s+([\d.]+)/),
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    avgLatencyMs: num(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
    runMs: num(/Run time \(s\):\s+([\d.]+)/) * 1000,
    ...(o.percentiles ? percentiles(stdout) : {}),
  };
}

/** p50 and p99 of the "> RCODE NAME TYPE SECONDS" lines dnsperf -v prints per answered query. */
function percentiles(stdout: string): { p50Ms: number; p99Ms: number } {
  const ms = [...stdout.matchAll(/^> \S+ \S+ \S+ ([\d.]+)$/gm)].map((m) => Number(m[1]) * 1000);
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}
