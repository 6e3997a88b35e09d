// The miss path alone: clusterdns's pipeline driven in this process (no socket), on a mix whose
// distinct questions outnumber `cache`'s capacity, or on unique names that never repeat, so most
// queries go past the answer cache. Prints CPU ns and JS heap bytes allocated per query, and how many
// queries the fast path answered.
//   node --max-semi-space-size=64 bench/miss-path.ts       (BENCH_MIX=over|unique|hot, BENCH_COREFILE,
//                                                           BENCH_SERVICES; the first 20k queries warm)
//   node --cpu-prof --max-semi-space-size=64 bench/miss-path.ts    a profile of the same
// Bytes allocated are read as the growth of V8's used heap between collections (v8.GCProfiler reports
// the heap before and after each): with a large young generation there are few, and the figure is
// exact to a few KB over the run.

import { heapGrowth } from "./heap-growth.ts";
import { benchCorefileChoice } from "./clusterdns-run.ts";
import { queryPackets, startInProcess } from "./in-process.ts";
import { answerCacheStats } from "../src/metrics/server-stats.ts";
import { mixChoice, mixQueries } from "./mixes.ts";

const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const mix = mixChoice();
const which = benchCorefileChoice();
const { cluster, inst, pipeline, peer } = await startInProcess(services, which);

const lines = mixQueries(cluster, mix);
const packets = queryPackets(lines);
const distinct = new Set(lines).size;

// As the batched engine drives it: replies written into one output buffer.
const outBuf = Buffer.alloc(128 * 1024);
async function pass(list: Buffer[]): Promise<void> {
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    const out = pipeline.handleInto(p, p.length, peer, outBuf, 0);
    if (out instanceof Promise) await out;
  }
}

const warm = mix === "hot" ? packets : packets.slice(0, Math.min(20_000, packets.length));
await pass(warm);
await pass(warm);
const timed = mix === "hot" ? packets : packets.slice(warm.length);
const before = { ...answerCacheStats };
const sampling = process.env.MISS_ALLOC_PROFILE === "1" ? await startSampling() : undefined;
const growth = heapGrowth();
const cpu = process.cpuUsage();
await pass(timed);
const cpuUsed = process.cpuUsage(cpu);
const { bytes: allocated, collections } = growth();
if (sampling !== undefined) await sampling();
const n = timed.length;
const hits = answerCacheStats.hits - before.hits;
const lane = answerCacheStats.lane - before.lane;
const refills = answerCacheStats.refills - before.refills;
process.stdout.write(
  `${which}, ${mix} mix, ${services} services, ${n} queries over ${distinct} distinct questions: ` +
    `${(((cpuUsed.user + cpuUsed.system) * 1000) / n).toFixed(0)} ns CPU per query, ` +
    `${(allocated / n).toFixed(0)} heap bytes allocated per query, ${collections.length} collections, ` +
    `replayed ${((100 * hits) / n).toFixed(1)}%, lane ${((100 * (lane - refills)) / n).toFixed(1)}% ` +
    `(refilled ${((100 * refills) / n).toFixed(1)}%), chain ${((100 * (n - hits - lane)) / n).toFixed(1)}%\n`,
);
await inst.stop();
process.exit(0);

/** Samples every allocation (also those collected since) until the returned function prints where
 * the bytes went, by function. */
async function startSampling(): Promise<() => Promise<void>> {
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as object);
  return async () => {
    const { profile } = (await session.post("HeapProfiler.stopSampling")) as {
      profile: { head: SampleNode };
    };
    const self = new Map<string, number>();
    let total = 0;
    const walk = (n: SampleNode, path: string) => {
      const f = n.callFrame;
      const here = `${f.functionName || "(anon)"} ${f.url.replace(/^.*\/(src|bench|node_modules)\//, "$1/")}:${f.lineNumber + 1}`;
      total += n.selfSize;
      if (n.selfSize > 0)
        self.set(`${here}  <- ${path}`, (self.get(`${here}  <- ${path}`) ?? 0) + n.selfSize);
      for (const c of n.children) walk(c, here);
    };
    walk(profile.head, "");
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
      process.stdout.write(`${((100 * v) / total).toFixed(1).padStart(5)}% ${k}\n`);
    }
  };
}

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}
