// Checks the benchmark's allocation measure (bench/gc-alloc.ts: V8's --trace-gc-nvp lines summed over
// the load's window, divided by the queries answered) on a toy server whose allocation per query is
// known: bench/alloc-toy.ts, an echo that allocates K arrays per query, run as the benchmark runs its
// Node servers (the image's node flags, pinned, loaded by dnsperf). The echo's own cost per query is
// unknown, so the toy runs with K = 0 and with K = 8: the measured difference must be 8 arrays' worth,
// as the toy measured one array in-process (heapUsed). K = 8 runs twice: with the arrays dying young
// (scavenges only), and kept until 100,000 later ones (promoted; full collections under the load).
// Exits 1 when a difference is off by more than 2%.
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
  full: number;
  queries: number;
  perArray: number;
}

async function measure(arrays: number, kept: number): Promise<Measure> {
  const toyArgs = ["0", String(arrays), String(kept)];
  const args = [...NODE_FLAGS, GC_TRACE_FLAG, join(ROOT, "bench", "alloc-toy.ts"), ...toyArgs];
  const toy = await startPinned(process.execPath, args, /toy listening on \d+/);
  try {
    const [, port, perArray] = /listening on (\d+), ([\d.]+) bytes/.exec(toy.line)!;
    const from = performance.now();
    const r = await dnsperf({ port: Number(port), queryFile, seconds, core: PIN ? 1 : undefined });
    const to = performance.now();
    await sleep(100);
    const a = allocatedIn(toy.lines, toy.times, from, to, r.runMs);
    if (!a.measured) throw new Error(`alloc-check: only ${a.collections} collections in ${seconds} s`);
    return {
      perQuery: a.bytes / r.completed,
      slack: a.extrapolated / r.completed,
      collections: a.collections,
      full: a.full,
      queries: r.completed,
      perArray: Number(perArray),
    };
  } finally {
    await stop(toy.proc);
  }
}

const base = await measure(0, 16);
const young = await measure(ARRAYS, 16);
const promoted = await measure(ARRAYS, 100_000);
const expected = ARRAYS * young.perArray;
const offBy = (m: Measure) => (m.perQuery - base.perQuery) / expected - 1;
const row = (k: number, kept: number, m: Measure) =>
  `| ${k} | ${kept} | ${m.queries} | ${m.collections} (${m.full} full) | ${m.perQuery.toFixed(1)} (±${m.slack.toFixed(1)}) | ` +
  (k === 0 ? "-" : `${(m.perQuery - base.perQuery).toFixed(0)} (${(100 * offBy(m)).toFixed(2)}% off)`) +
  " |";
console.log(
  [
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, node flags ${NODE_FLAGS.join(" ")} ${GC_TRACE_FLAG}, ${seconds} s per run`,
    "",
    "| arrays per query | kept | queries | collections | JS heap B/query from the GC trace | less the echo's own |",
    "|---|---|---|---|---|---|",
    row(0, 16, base),
    row(ARRAYS, 16, young),
    row(ARRAYS, 100_000, promoted),
    "",
    `One array measured in-process: ${young.perArray.toFixed(1)} B, so ${ARRAYS} arrays are ${expected.toFixed(0)} B per query.`,
  ].join("\n"),
);
const worst = Math.max(Math.abs(offBy(young)), Math.abs(offBy(promoted)));
if (worst > TOLERANCE) {
  console.error(
    `alloc-check: the GC trace's measure is ${(100 * worst).toFixed(1)}% off (more than ${100 * TOLERANCE}%)`,
  );
  process.exitCode = 1;
}
