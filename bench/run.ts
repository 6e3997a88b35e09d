// The benchmark: dnsperf against clusterdns and a bare Node UDP echo server, one after the other in one
// run, each server pinned to core 0 and dnsperf to core 1. Prints a table with the ratio.
//   npm run bench            (10 s per server)
//   BENCH_SECONDS=30 npm run bench
// Needs dnsperf and taskset (Debian: dnsperf, util-linux).

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { dnsperf, type PerfResult } from "./dnsperf.ts";

const ROOT = resolve(import.meta.dirname, "..");
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-"));
const pin = cpus().length > 1;

function startPinned(args: string[], readyLine: RegExp): Promise<{ proc: ChildProcess; line: string }> {
  const cmd = pin ? "taskset" : process.execPath;
  const full = pin ? ["-c", "0", process.execPath, ...args] : args;
  const proc = spawn(cmd, full, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, CLUSTERDNS_LOG_LEVEL: "warn" },
  });
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

  const rows: { name: string; r: PerfResult; rss: number }[] = [];

  const cd = await startPinned(
    [join(ROOT, "bin", "clusterdns"), "-conf", corefile, "-dns.port", "0"],
    /"started"/,
  );
  const port = (JSON.parse(cd.line) as { ports: number[] }).ports[0];
  await dnsperf({ port, queryFile: queries, seconds: 2, core: pin ? 1 : undefined }); // warm-up (JIT, cache)
  rows.push({
    name: "clusterdns (file zone, cached)",
    r: await dnsperf({ port, queryFile: queries, seconds, core: pin ? 1 : undefined }),
    rss: await rssOf(cd.proc),
  });
  await stop(cd.proc);

  const echoPort = 20000 + Math.floor(Math.random() * 20000);
  const echo = await startPinned([join(ROOT, "bench", "echo-server.ts"), String(echoPort)], /echo listening/);
  await dnsperf({ port: echoPort, queryFile: queries, seconds: 2, core: pin ? 1 : undefined });
  rows.push({
    name: "bare Node UDP echo",
    r: await dnsperf({ port: echoPort, queryFile: queries, seconds, core: pin ? 1 : undefined }),
    rss: await rssOf(echo.proc),
  });
  await stop(echo.proc);

  const base = rows[1].r.qps;
  process.stdout.write(
    `\n${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ${process.version}, ${seconds}s per server${pin ? ", server on core 0, dnsperf on core 1" : ""}\n\n`,
  );
  process.stdout.write(
    "| server | QPS | vs echo | avg latency ms | lost | RSS MB |\n|---|---|---|---|---|---|\n",
  );
  for (const { name, r, rss } of rows) {
    process.stdout.write(
      `| ${name} | ${Math.round(r.qps)} | ${(r.qps / base).toFixed(2)} | ${r.avgLatencyMs.toFixed(3)} | ${r.lost} | ${rss.toFixed(0)} |\n`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
