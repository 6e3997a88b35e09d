// Propagation: the time from a write to the API to the first answer that shows it. A generated
// cluster (BENCH_SERVICES, default 10k) behind the test API server, one clusterdns; then
// BENCH_CHANGES (default 100) services get a new ClusterIP one after another, and each is asked over
// UDP every millisecond (bounded) until the new address comes back.
//   npm run bench:propagation

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateCluster } from "./cluster-gen.ts";
import { memoryOf, stop } from "./processes.ts";
import { propagation, quantile, runOnCluster } from "./clusterdns-run.ts";

const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const changes = Number(process.env.BENCH_CHANGES ?? 100);

async function main(): Promise<void> {
  const cluster = generateCluster({ services });
  const r = await runOnCluster(cluster, mkdtempSync(join(tmpdir(), "clusterdns-prop-")));
  const times = await propagation(r, cluster, changes);
  const mem = memoryOf(r.cd.proc.pid);
  await stop(r.cd.proc);
  await r.api.close();
  process.stdout.write(
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${services} services, ${changes} changes: ` +
      `API write -> new answer p50 ${quantile(times, 0.5)} ms, p99 ${quantile(times, 0.99)} ms, ` +
      `max ${times.at(-1)!.toFixed(1)} ms; start to synced ${r.startToSyncedMs.toFixed(0)} ms ` +
      `(${r.listToSyncedMs.toFixed(0)} ms after the last LIST); RSS ${mem.rss.toFixed(0)} MB (peak ${mem.peak.toFixed(0)})\n`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
