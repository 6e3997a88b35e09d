// What one watch event costs the kubernetes store as the server keeps it (a shared index, an answer
// store taking its invalidations), in-process: a generated cluster is listed, then EndpointSlice
// events that each flip one endpoint's readiness (a rollout's, a failing node's) are parsed and
// applied, one write section each. Prints CPU and JS heap bytes allocated per event, and the
// collections they cost. The bytes are what a watch storm's garbage collections come from (those
// promoted, what its full collections come from), and they do not depend on the machine's load (CPU
// does).
//   node --max-semi-space-size=1 bench/watch-event-cost.ts [SERVICES] [EVENTS]
//   ALLOC=1 ...: also where the bytes were allocated, by function (sampled)

import { heapGrowth } from "./heap-growth.ts";
import { generateCluster } from "./cluster-gen.ts";
import { Store } from "../src/plugins/kubernetes/store/store.ts";
import { SharedIndex } from "../src/offheap/shared-index.ts";
import { AnswerStore } from "../src/answers/store.ts";
import type { KObject } from "../src/plugins/kubernetes/model/source.ts";
import { listCluster, readinessFlips } from "./slice-events.ts";

const services = Number(process.argv[2] ?? 10_000);
const events = Number(process.argv[3] ?? 20_000);
const WARM = Math.min(2000, events >> 1);
const cluster = generateCluster({ services, seed: 33 });
const lines = readinessFlips(cluster.objects, events);

const answers = new AnswerStore({ capacity: 10_000 });
const index = new SharedIndex();
const store = new Store({
  zones: ["cluster.local.", "in-addr.arpa.", "ip6.arpa."],
  waitFor: ["services", "endpointslices", "namespaces"],
  tables: index,
  onChange: (names) => (names === "all" ? answers.invalidate() : answers.invalidateNames(names)),
});
listCluster(store, cluster.objects, (fn) => index.write(fn));

const run = (from: number, to: number) => {
  for (let i = from; i < to; i++) {
    const e = JSON.parse(lines[i]) as { type: "MODIFIED"; object: KObject };
    index.write(() => store.apply("endpointslices", e.type, e.object));
  }
};
run(0, WARM);

const { Session } = await import("node:inspector/promises");
const session = new Session();
if (process.env.ALLOC === "1") {
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as object);
}
const growth = heapGrowth();
const cpu = process.cpuUsage();
run(WARM, events);
const used = process.cpuUsage(cpu);
const { bytes: allocated, promoted, collections } = growth();
const n = events - WARM;
const full = collections.filter((g) => g.gcType === "MarkSweepCompact").length;
process.stdout.write(
  `${services} services, ${n} EndpointSlice events: ${((used.user + used.system) / n).toFixed(1)} us CPU ` +
    `and ${(allocated / n).toFixed(0)} heap bytes per event (${(promoted / n).toFixed(0)} promoted by young ` +
    `collections), ${collections.length} collections (${full} full)\n`,
);

if (process.env.ALLOC === "1") {
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: Sample } };
  const self = new Map<string, number>();
  let total = 0;
  const walk = (s: Sample, caller: string) => {
    const f = s.callFrame;
    const here = `${f.functionName || "(anon)"} ${f.url.replace(/^.*\/(src|bench)\//, "$1/")}:${f.lineNumber + 1}`;
    total += s.selfSize;
    if (s.selfSize > 0)
      self.set(`${here} <- ${caller}`, (self.get(`${here} <- ${caller}`) ?? 0) + s.selfSize);
    for (const c of s.children) walk(c, here);
  };
  walk(profile.head, "");
  for (const [k, v] of [...self].sort((x, y) => y[1] - x[1]).slice(0, 25))
    process.stdout.write(`${((100 * v) / total).toFixed(1).padStart(5)}% ${k}\n`);
}

interface Sample {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Sample[];
}
