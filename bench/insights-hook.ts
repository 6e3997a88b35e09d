// The insights finish hook alone: Insights.record() in a loop over the over-capacity mix's names from
// BENCH_CLIENTS (256) client addresses, 1 NXDOMAIN in 8, as the pipeline would call it (the name's
// lowercased wire octets, the address string). Prints CPU ns per call, best of BENCH_ROUNDS (5), with
// every query in the top lists and as sampled at BENCH_QPS.
//   node bench/insights-hook.ts      (BENCH_SERVICES=10000, BENCH_CLIENTS, BENCH_ROUNDS, BENCH_QPS)
// A figure to set against bench/insights-cost.ts's CPU per query (the A/B through the pipeline).

import { generateCluster } from "./cluster-gen.ts";
import { mixQueries } from "./mixes.ts";
import { Insights } from "../src/plugins/insights/insights.ts";
import { nameToWire } from "../src/dns/name.ts";
import { Rcode } from "../src/dns/constants.ts";
import type { QueryDone } from "../src/metrics/query-done.ts";

const clients = Number(process.env.BENCH_CLIENTS ?? 256);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const lines = mixQueries(generateCluster({ services: Number(process.env.BENCH_SERVICES ?? 10_000) }), "over");
const addresses = Array.from({ length: clients }, (_, i) => `10.244.${i >> 8}.${i & 255}`);
const queries = lines.map((line, i) => ({
  remoteAddress: addresses[i % clients],
  // The scan's key: the name, then octets of its own (here the type), as QueryDone.nameWire holds it.
  nameWire: Uint8Array.from([...(nameToWire(`${line.split(" ")[0].toLowerCase()}.`) as Uint8Array), 0, 1]),
  rcode: i % 8 === 0 ? Rcode.NXDOMAIN : Rcode.NOERROR,
  cached: i % 3 === 0,
  plugin: "",
})) as unknown as QueryDone[];
const ins = new Insights({
  zone: nameToWire("cluster.local.") as Uint8Array,
  workloads: 2004,
  top: 20,
  autopath: false,
});
for (let i = 0; i < clients; i += 2) {
  ins.workloads.apply("pods", "ADDED", {
    metadata: { name: `p${i}`, namespace: `ns${i % 16}` },
    status: { podIP: addresses[i], podIPs: [{ ip: addresses[i] }] },
  } as never);
}
// The top lists sample above sampling.ts's RATE queries a second: measured with every query counted,
// and as at BENCH_QPS (100k, about one core's rate on this mix) where they count a sample.
const qps = Number(process.env.BENCH_QPS ?? 100_000);
for (const rate of [0, qps]) {
  ins.sampling.adapt(rate);
  let best = Infinity;
  for (let r = 0; r < rounds + 1; r++) {
    const cpu = process.cpuUsage();
    for (const q of queries) ins.record(q);
    const used = process.cpuUsage(cpu);
    const ns = ((used.user + used.system) * 1000) / queries.length;
    if (r > 0) best = Math.min(best, ns);
  }
  process.stdout.write(
    `insights record(), top lists counting 1 query in ${ins.sampling.every}: ${best.toFixed(0)} ns CPU per ` +
      `call, best of ${rounds} rounds of ${queries.length} (${new Set(lines).size} distinct questions, ` +
      `${clients} clients)\n`,
  );
}
