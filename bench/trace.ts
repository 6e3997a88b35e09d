// What trace costs: three clusterdns servers on one zone file behind `cache`, without trace, with
// `trace ... { every 100 }` and with every query traced (`every 1`), each sending its spans to a Zipkin
// sink (an HTTP server that reads and counts them, on dnsperf's core); dnsperf loads them in
// alternating rounds on names the answer store holds (the cheapest query, so the largest share for
// trace: a sampled one takes the chain). Prints per round QPS and server CPU per answered query, then
// the medians and the spans the sink got.
//   node bench/trace.ts        (BENCH_SECONDS 5, BENCH_ROUNDS 3; BENCH_PIN=0 leaves them unpinned)

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { dnsperf } from "./dnsperf.ts";
import { sleep, startClusterdns } from "./clusterdns-run.ts";
import { PIN, cpuSecondsOf, stop, type Started } from "./processes.ts";
import { ROOT } from "../test/helpers/server.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const seconds = env("BENCH_SECONDS", 5);
const rounds = env("BENCH_ROUNDS", 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-trace-"));
const queries = join(dir, "queries");
writeFileSync(queries, ["www", "ns1", "ns2", "mail"].map((n) => `${n}.example.org A\n`).join(""));

// The sink: counts the spans of each POST and prints the total on a line "spans N" when asked.
const sinkCode = `
let spans = 0;
const s = require("node:http").createServer((q, r) => {
  const parts = [];
  q.on("data", (d) => parts.push(d));
  q.on("end", () => { spans += JSON.parse(Buffer.concat(parts).toString()).length; r.writeHead(202).end(); });
});
s.listen(0, "127.0.0.1", () => console.log("port " + s.address().port));
require("node:readline").createInterface({ input: process.stdin }).on("line", () => console.log("spans " + spans));`;
const sink = spawn(
  PIN ? "taskset" : process.execPath,
  PIN ? ["-c", "1", process.execPath, "-e", sinkCode] : ["-e", sinkCode],
  {
    stdio: ["pipe", "pipe", "inherit"],
  },
);
const lines = createInterface({ input: sink.stdout! });
const next = () => new Promise<string>((done) => lines.once("line", done));
const sinkPort = Number((await next()).split(" ")[1]);
async function sinkSpans(): Promise<number> {
  const got = next();
  sink.stdin!.write("\n");
  return Number((await got).split(" ")[1]);
}

interface Variant {
  name: string;
  server: Started;
  port: number;
  qps: number[];
  cpuUs: number[];
}

const variants: Variant[] = [];
for (const [name, line] of [
  ["off", ""],
  ["every 100", `trace 127.0.0.1:${sinkPort} {\n    every 100\n  }`],
  ["every 1", `trace 127.0.0.1:${sinkPort}`],
] as const) {
  const corefile = join(dir, `Corefile.${variants.length}`);
  const zone = join(ROOT, "zones", "example.org.zone");
  writeFileSync(corefile, `example.org {\n  ${line}\n  cache 30\n  file ${zone}\n}\n`);
  const { cd, port } = await startClusterdns(corefile);
  variants.push({ name, server: cd, port, qps: [], cpuUs: [] });
}
await sleep(1000);

console.log(`trace cost: ${rounds} rounds of ${seconds} s, pinned: ${PIN}`);
for (let r = 0; r < rounds; r++) {
  // Each round starts with the next variant: a place in the round gives none of them an edge.
  for (const v of [...variants.slice(r % variants.length), ...variants.slice(0, r % variants.length)]) {
    const before = cpuSecondsOf(v.server.proc.pid);
    const p = await dnsperf({ port: v.port, queryFile: queries, seconds, core: PIN ? 1 : undefined });
    const cpu = cpuSecondsOf(v.server.proc.pid) - before;
    v.qps.push(p.qps);
    v.cpuUs.push((cpu / p.completed) * 1e6);
    console.log(
      `round ${r + 1} ${v.name.padEnd(9)} ${p.qps.toFixed(0).padStart(7)} QPS  ` +
        `${((cpu / p.completed) * 1e6).toFixed(2)} us CPU/query  lost ${p.lost}`,
    );
  }
}
await sleep(1500);
console.log("\nmedians:");
for (const v of variants)
  console.log(
    `${v.name.padEnd(9)} ${median(v.qps).toFixed(0).padStart(7)} QPS  ${median(v.cpuUs).toFixed(2)} us CPU/query`,
  );
console.log(`spans the sink got: ${await sinkSpans()}`);

for (const v of variants) await stop(v.server.proc, 0);
sink.kill("SIGTERM");
rmSync(dir, { recursive: true, force: true });
