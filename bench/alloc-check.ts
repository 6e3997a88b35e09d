// Checks the benchmark's allocation measure (bench/gc-alloc.ts: V8's --trace-gc-nvp lines summed over
// the load's window, divided by the queries answered) on a toy server whose allocation per query is
// known: bench/alloc-toy.ts, an echo that allocates K arrays per query, run as the benchmark runs its
// Node servers (the image's node flags, pinned, loaded by dnsperf). The echo's own cost per query is
// unknown, so the toy runs with K = 0 and with K = 8: the measured difference must be 8 arrays' worth,
// as the toy measured one array in-process (heapUsed). Exits 1 when they differ by more than 2%.
//   node bench/alloc-check.ts             (BENCH_SECONDS, 5 by default)

import { join, resolve } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import { sleep } from "./clusterdns-run.ts";
import { GC_TRACE_FLAG, allocatedIn } from "./gc-alloc.ts";
import { NODE_FLAGS, PIN, startPinned, stop } from "./processes.ts";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";

const ROOT = resolve(import.meta.dirname, "..");
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const ARRAYS = 8;
const TOLERANCE = 0.02;

const dir = mkdtempSync(join(tmpdir(), "clusterdns-alloc-check-"));
const queryFile = join(dir, "queries.txt");
writeFileSync(queryFile, Array.from({ length: 1000 }, (_, i) => `q${i}.example. A`).join("\n") + "\n");

interface Measure {
  perQuery: number;
  slack: number;
  collections: number;
  queries: number;
  perArray: number;
}

async function measure(arrays: number): Promise<Measure> {
  const args = [...NODE_FLAGS, GC_TRACE_FLAG, join(ROOT, "bench", "alloc-toy.ts"), "0", String(arrays)];
  const toy = await startPinned(process.execPath, args, /toy listening on \d+/);
  try {
    const [, port, perArray] = /listening on (\d+), ([\d.]+) bytes/.exec(toy.line)!;
    const from = toy.lines.length;
    const r = await dnsperf({ port: Number(port), queryFile, seconds, core: PIN ? 1 : undefined });
    await sleep(100);
    const a = allocatedIn(toy.lines.slice(from));
    return {
      perQuery: a.bytes / r.completed,
      slack: a.slack / r.completed,
      collections: a.collections,
      queries: r.completed,
      perArray: Number(perArray),
    };
  } finally {
    await stop(toy.proc);
  }
}

const base = await measure(0);
const loaded = await measure(ARRAYS);
const expected = ARRAYS * loaded.perArray;
const measured = loaded.perQuery - base.perQuery;
const error = measured / expected - 1;
const row = (k: number, m: Measure) =>
  `| ${k} | ${m.queries} | ${m.collections} | ${m.perQuery.toFixed(1)} (±${m.slack.toFixed(1)}) |`;
console.log(
  [
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, node flags ${NODE_FLAGS.join(" ")} ${GC_TRACE_FLAG}, ${seconds} s per run`,
    "",
    "| arrays per query | queries | collections | JS heap B/query from the GC trace |",
    "|---|---|---|---|",
    row(0, base),
    row(ARRAYS, loaded),
    "",
    `One array measured in-process: ${loaded.perArray.toFixed(1)} B; ${ARRAYS} arrays: ${expected.toFixed(0)} B per query. ` +
      `The trace's difference: ${measured.toFixed(0)} B per query, ${(100 * error).toFixed(2)}% off.`,
  ].join("\n"),
);
if (Math.abs(error) > TOLERANCE) {
  console.error(
    `alloc-check: the GC trace's measure is ${(100 * error).toFixed(1)}% off (more than ${100 * TOLERANCE}%)`,
  );
  process.exitCode = 1;
}
