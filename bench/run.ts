// The benchmark: dnsperf against clusterdns and a bare Node UDP echo server, one after the other in one
// run, each server pinned to core 0 and dnsperf to core 1. Prints a table with the ratio.
//   npm run bench                            (3 rounds of 10 s per server)
//   BENCH_SECONDS=30 BENCH_ROUNDS=5 npm run bench
// Needs dnsperf and taskset (Debian: dnsperf, util-linux).

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { dnsperf, type PerfResult } from "./dnsperf.ts";

const ROOT = resolve(import.meta.dirname, "..");
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-"));
const pin = cpus().length > 1;

/** Servers started by this run: killed whatever way the run ends. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

function startPinned(args: string[], readyLine: RegExp): Promise<{ proc: ChildProcess; line: string }> {
  const cmd = pin ? "taskset" : process.execPath;
  const full = pin ? ["-c", "0", process.execPath, ...args] : args;
  const proc = spawn(cmd, full, {
    stdio: ["ignore", "pipe", "inherit"],
    // info: the "started" line carries the bound port; the Corefile has no `log`, so queries are silent.
    env: { ...process.env, CLUSTERDNS_LOG_LEVEL: "info" },
  });
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${args.join(" ")} did not start`)), 20_000);
    createInterface({ input: proc.stdout! }).on("line", (line) => {
      if (readyLine.test(line)) {
        clearTimeout(timer);
        res({ proc, line });
      }
    });
  });
}

async function stop(p: ChildProcess): Promise<void> {
  const exited = new Promise((r) => p.once("exit", r));
  p.kill("SIGTERM");
  const t = setTimeout(() => p.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(t);
}

async function rssOf(p: ChildProcess): Promise<number> {
  const { readFileSync } = await import("node:fs");
  try {
    const status = readFileSync(`/proc/${p.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

interface Target {
  name: string;
  port: number;
  proc: ChildProcess;
  runs: PerfResult[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const queries = join(dir, "queries.txt");
  writeFileSync(
    queries,
    [
      "www.example.org A",
      "example.org SOA",
      "web.example.org A",
      "example.org MX",
      "nope.example.org A",
    ].join("\n") + "\n",
  );
  const corefile = join(dir, "Corefile");
  writeFileSync(corefile, `example.org {\n    file ${ROOT}/zones/example.org.zone\n}\n`);

  // Every server runs for the whole benchmark, pinned to core 0; only the one under load is busy. The
  // rounds alternate between them, so a slow minute on a shared machine hits all alike; the table
  // shows the median round of each.
  const cd = await startPinned(
    [join(ROOT, "bin", "clusterdns"), "-conf", corefile, "-dns.port", "0"],
    /"started"/,
  );
  const echoPort = 20000 + Math.floor(Math.random() * 20000);
  const echo = await startPinned([join(ROOT, "bench", "echo-server.ts"), String(echoPort)], /echo listening/);
  const targets: Target[] = [
    {
      name: "clusterdns (file zone, cached)",
      port: (JSON.parse(cd.line) as { ports: number[] }).ports[0],
      proc: cd.proc,
      runs: [],
    },
    { name: "bare Node UDP echo", port: echoPort, proc: echo.proc, runs: [] },
  ];
  const core = pin ? 1 : undefined;
  for (const t of targets) await dnsperf({ port: t.port, queryFile: queries, seconds: 2, core }); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) t.runs.push(await dnsperf({ port: t.port, queryFile: queries, seconds, core }));
  }
  const rss = await Promise.all(targets.map((t) => rssOf(t.proc)));
  for (const t of targets) await stop(t.proc);

  const base = median(targets[1].runs.map((r) => r.qps));
  process.stdout.write(
    `\n${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ${process.version}, ${rounds} rounds of ${seconds}s per server, median shown${pin ? ", servers on core 0, dnsperf on core 1" : ""}\n\n`,
  );
  process.stdout.write(
    "| server | QPS (median) | QPS per round | vs echo | avg latency ms | lost | RSS MB |\n|---|---|---|---|---|---|---|\n",
  );
  targets.forEach((t, i) => {
    const qps = median(t.runs.map((r) => r.qps));
    const lat = median(t.runs.map((r) => r.avgLatencyMs));
    const lost = t.runs.reduce((n, r) => n + r.lost, 0);
    const each = t.runs.map((r) => Math.round(r.qps)).join(" / ");
    process.stdout.write(
      `| ${t.name} | ${Math.round(qps)} | ${each} | ${(qps / base).toFixed(2)} | ${lat.toFixed(3)} | ${lost} | ${rss[i].toFixed(0)} |\n`,
    );
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
