// The scale run: for each cluster size (BENCH_SCALES, default 1000,10000,100000 services), one
// clusterdns on the generated cluster behind the test API server. It measures start to synced and
// the time after the last LIST, RSS once synced, the peak while starting, the peak during a forced
// relist (the API compacts and drops every watch: 410 Gone, then a LIST of everything again), and
// propagation for 20 changes. It prints a table with CoreDNS's memory formula for the same cluster:
// (pods + services) / 1000 + 54 MB.
//   npm run bench:scale

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateCluster } from "./cluster-gen.ts";
import { memoryOf, resetPeak, stop } from "./processes.ts";
import { corednsFormulaMb, propagation, quantile, runOnCluster, sleep } from "./clusterdns-run.ts";

const scales = (process.env.BENCH_SCALES ?? "1000,10000,100000").split(",").map(Number);

interface Row {
  services: number;
  endpoints: number;
  pods: number;
  startS: string;
  afterListS: string;
  rss: number;
  startPeak: number;
  relistPeak: number;
  coredns: number;
  p50: string;
  p99: string;
}

async function measure(services: number): Promise<Row> {
  const cluster = generateCluster({ services });
  const r = await runOnCluster(cluster, mkdtempSync(join(tmpdir(), "clusterdns-scale-")));
  const pid = r.cd.proc.pid!;
  await sleep(2000);
  const synced = memoryOf(pid);
  // Reset the peak (VmHWM) so the relist's own peak shows.
  resetPeak(pid);
  const lists = r.api.requests.length;
  r.api.compact();
  r.api.dropWatches();
  // Relisted once every kind's watch is open again after new LISTs.
  for (let i = 0; i < 3000; i++) {
    await sleep(20);
    const relisted = r.api.requests.slice(lists).filter((q) => !q.watch).length > 0;
    if (relisted && r.api.openWatches() >= 3) break;
  }
  await sleep(2000);
  const relist = memoryOf(pid);
  const times = await propagation(r, cluster, 20);
  await stop(r.cd.proc);
  await r.api.close();
  const c = cluster.counts;
  return {
    services,
    endpoints: c.endpoints,
    pods: c.pods,
    startS: (r.startToSyncedMs / 1000).toFixed(1),
    afterListS: (r.listToSyncedMs / 1000).toFixed(2),
    rss: Math.round(synced.rss),
    startPeak: Math.round(synced.peak),
    relistPeak: Math.round(relist.peak),
    coredns: corednsFormulaMb(c),
    p50: quantile(times, 0.5),
    p99: quantile(times, 0.99),
  };
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const n of scales) {
    process.stderr.write(`scale: ${n} services...\n`);
    rows.push(await measure(n));
  }
  const out = [
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, npm run bench:scale`,
    "",
    "| services | endpoints | pods | start to synced s | synced after last LIST s | RSS MB | peak at start MB | peak in relist MB | CoreDNS formula MB | propagation p50 / p99 ms |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (x) =>
        `| ${x.services} | ${x.endpoints} | ${x.pods} | ${x.startS} | ${x.afterListS} | ${x.rss} | ${x.startPeak} | ${x.relistPeak} | ${x.coredns} | ${x.p50} / ${x.p99} |`,
    ),
  ];
  process.stdout.write(out.join("\n") + "\n");
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
