// Memory under sustained query load: what a pod's limit must hold. For each cluster size
// (BENCH_SCALES, default 10000,100000 services) one clusterdns on the generated cluster behind the test
// API server, then dnsperf at full speed for BENCH_SECONDS (default 60) with that cluster's query mix.
// The short rounds of `npm run bench` end before V8's first full collection under load; this run lasts
// long enough for several. Prints RSS once synced, the peak under load, and the RSS when the load ends.
//   npm run bench:memory

import { dnsperf } from "./dnsperf.ts";
import { corednsFormulaMb, runWithQueries, sleep } from "./clusterdns-run.ts";
import { PIN, memoryOf, resetPeak, stop } from "./processes.ts";

const scales = (process.env.BENCH_SCALES ?? "10000,100000").split(",").map(Number);
const seconds = Number(process.env.BENCH_SECONDS ?? 60);

interface Row {
  services: number;
  synced: number;
  peak: number;
  end: number;
  qps: number;
  formula: number;
}

async function measure(services: number): Promise<Row> {
  const { cluster, r, queryFile } = await runWithQueries(services, "clusterdns-load-memory-");
  try {
    const pid = r.cd.proc.pid!;
    await sleep(2000);
    const synced = memoryOf(pid);
    // Reset the peak (VmHWM) so the load's own peak shows, not the start's.
    resetPeak(pid);
    const perf = await dnsperf({ port: r.port, queryFile, seconds, core: PIN ? 1 : undefined });
    const after = memoryOf(pid);
    const c = cluster.counts;
    return {
      services,
      synced: Math.round(synced.rss),
      peak: Math.round(after.peak),
      end: Math.round(after.rss),
      qps: Math.round(perf.qps),
      formula: corednsFormulaMb(c),
    };
  } finally {
    await stop(r.cd.proc);
    await r.api.close();
  }
}

const rows: Row[] = [];
for (const n of scales) {
  process.stderr.write(`load-memory: ${n} services, ${seconds} s of load...\n`);
  rows.push(await measure(n));
}
process.stdout.write(
  [
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${seconds} s of full load, npm run bench:memory`,
    "",
    "| services | RSS synced MB | peak under load MB | RSS after load MB | QPS | CoreDNS formula MB |",
    "|---|---|---|---|---|---|",
    ...rows.map((x) => `| ${x.services} | ${x.synced} | ${x.peak} | ${x.end} | ${x.qps} | ${x.formula} |`),
  ].join("\n") + "\n",
);
