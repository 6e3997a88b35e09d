// The hot path alone: clusterdns's pipelines driven in this process with the benchmark's query mix, no
// socket in between, so a change to the per-query work is measured without the I/O that dominates a
// dnsperf run (and without its noise on a shared machine: CPU time of this process only). The cluster
// comes from an `objects` file of the generated cluster; the Corefile is one of the benchmark's.
//   node bench/hot-path.ts                  (BENCH_SERVICES, BENCH_COREFILE, HOT_PASSES)
//   node --cpu-prof bench/hot-path.ts       a profile of the same
//   node --expose-gc bench/hot-path.ts      also the memory one answer-cache entry takes
// Prints CPU ns per query over the timed passes, and how many the fast path answered.

import { benchCorefileChoice } from "./clusterdns-run.ts";
import { queryPackets, startInProcess } from "./in-process.ts";
import { answerCacheStats } from "../src/metrics/server-stats.ts";

const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const passes = Number(process.env.HOT_PASSES ?? 20);
const which = benchCorefileChoice();
const { cluster, inst, pipeline, peer } = await startInProcess(services, which);
const packets = queryPackets(cluster.queries);

async function pass(): Promise<void> {
  for (const p of packets) {
    const out = pipeline.handle(p, peer);
    if (out instanceof Promise) await out;
  }
}

/** Heap and ArrayBuffer bytes in use after full collections (NaN without --expose-gc). */
const used = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return NaN;
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
await pass(); // fills the answer cache
await pass(); // and warms the code
const before = { ...answerCacheStats };
const cpu = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < passes; i++) await pass();
const cpuUsed = process.cpuUsage(cpu);
const wall = performance.now() - t0;
const n = passes * packets.length;
const hits = answerCacheStats.hits - before.hits;
// Memory of the entries alone: with the answer cache full, then emptied (the code the passes compiled
// and what the store worked out on the way stay in both).
const entries = pipeline.answers.size;
const replyBytes = pipeline.answers.store.bytes().used / entries;
const full = used();
pipeline.answers.invalidate();
const perEntry = (full - used()) / entries;
process.stdout.write(
  `${which}, ${services} services, ${n} queries: ${(((cpuUsed.user + cpuUsed.system) * 1000) / n).toFixed(0)} ns CPU per query ` +
    `(${((wall * 1e6) / n).toFixed(0)} ns wall), fast path ${((100 * hits) / n).toFixed(1)}%` +
    (Number.isNaN(perEntry)
      ? ""
      : `; ${entries} answer-cache entries, ${perEntry.toFixed(0)} bytes each (key and reply ${replyBytes.toFixed(0)})`) +
    "\n",
);
await inst.stop();
process.exit(0);
