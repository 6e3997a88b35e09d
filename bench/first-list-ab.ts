// The first list through the API, checkout against checkout in one run: one generated cluster served by
// the test API server (in this process), then clusterdns from each checkout started on it in turn,
// alternating, each timed from spawn to its "synced" line. Per start: wall seconds to ready, the CPU
// seconds clusterdns used until then, the CPU seconds this process (the API server) used meanwhile,
// RSS 2 s after ready and the peak; the load average beside each. Each checkout needs its dist/ built
// (npm run build) and its build/ (the native addon).
//   node bench/first-list-ab.ts [--services 100000] [--rounds 2] [CHECKOUT...]   (default: this one)

import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { generateCluster } from "./cluster-gen.ts";
import { serveWithCorefile, sleep, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import { cpuSecondsOf, memoryOf, stop } from "./processes.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    services: { type: "string", default: "100000" },
    rounds: { type: "string", default: "2" },
  },
});
const checkouts = positionals.length > 0 ? positionals.map((p) => resolve(p)) : [resolve(".")];
const cluster = generateCluster({ services: Number(values.services), bigHeadless: 5000 });
const dir = mkdtempSync(join(tmpdir(), "clusterdns-first-list-"));
// The same Corefile for every checkout (BENCH_COREFILE, kubeadm's by default).
const { api, corefile } = await serveWithCorefile(cluster, dir);

const load = () => loadavg()[0].toFixed(1);
process.stdout.write(
  `${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, ${cluster.counts.services} services, ` +
    `${cluster.objects.length} objects, ${values.rounds} rounds\n`,
);
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const checkout of checkouts) {
      const load0 = load();
      const api0 = process.cpuUsage();
      const t0 = performance.now();
      const { cd } = await startClusterdns(corefile, { checkout });
      await untilSynced(cd);
      const readyS = (performance.now() - t0) / 1000;
      const cpuS = cpuSecondsOf(cd.proc.pid);
      const apiCpu = process.cpuUsage(api0);
      await sleep(2000);
      const mem = memoryOf(cd.proc.pid);
      await stop(cd.proc);
      process.stdout.write(
        `${checkout}: ready ${readyS.toFixed(1)} s, CPU ${cpuS.toFixed(1)} s, API server CPU ` +
          `${((apiCpu.user + apiCpu.system) / 1e6).toFixed(1)} s, RSS ${mem.rss.toFixed(0)} MB ` +
          `(peak ${mem.peak.toFixed(0)}), load ${load0} -> ${load()}\n`,
      );
    }
  }
} finally {
  await api.close();
}
