// The hot path alone: clusterdns's pipelines driven in this process with the benchmark's query mix, no
// socket in between, so a change to the per-query work is measured without the I/O that dominates a
// dnsperf run (and without its noise on a shared machine: CPU time of this process only). The cluster
// comes from an `objects` file of the generated cluster; the Corefile is one of the benchmark's.
//   node bench/hot-path.ts                  (BENCH_SERVICES, BENCH_COREFILE, HOT_PASSES)
//   node --cpu-prof bench/hot-path.ts       a profile of the same
// Prints CPU ns per query over the timed passes, how many the fast path answered, and what an entry of
// the answer store takes: its octets in the slabs and its slot's elements in the typed arrays (the
// hash buckets, allocated once for the store's capacity, apart).

import { benchCorefileChoice } from "./clusterdns-run.ts";
import { queryPackets, startInProcess } from "./in-process.ts";
import { answerCacheStats } from "../src/metrics/server-stats.ts";

const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const passes = Number(process.env.HOT_PASSES ?? 20);
const which = benchCorefileChoice();
const { cluster, inst, pipeline, peer } = await startInProcess(services, which);
const packets = queryPackets(cluster.queries);

// As the batched engine drives it: replies written into one output buffer.
const outBuf = Buffer.alloc(128 * 1024);
async function pass(): Promise<void> {
  for (const p of packets) {
    const out = pipeline.handleInto(p, p.length, peer, outBuf, 0);
    if (out instanceof Promise) await out;
  }
}
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
const entries = pipeline.answers.size;
const bytes = pipeline.answers.store.bytes();
process.stdout.write(
  `${which}, ${services} services, ${n} queries: ${(((cpuUsed.user + cpuUsed.system) * 1000) / n).toFixed(0)} ns CPU per query ` +
    `(${((wall * 1e6) / n).toFixed(0)} ns wall), fast path ${((100 * hits) / n).toFixed(1)}%; ` +
    `${entries} answer-store entries, ${((bytes.used + bytes.perSlot * entries) / entries).toFixed(0)} bytes each ` +
    `(key and reply ${(bytes.used / entries).toFixed(0)} in the slabs, ${bytes.perSlot} in the arrays), ` +
    `${(bytes.buckets / 1e6).toFixed(1)} MB of hash buckets\n`,
);
await inst.stop();
process.exit(0);
