// A CPU profile of clusterdns under dnsperf load on the benchmark's cluster: where the time goes.
// A freshly started server, loaded with the mix BENCH_MIX names (hot, over or unique; hot by default,
// without the warm-up, so its first seconds fill the answer cache), on BENCH_COREFILE's Corefile.
//   node bench/profile.ts            (BENCH_SERVICES, BENCH_SECONDS as for bench/run.ts)
//   BENCH_MIX=over node bench/profile.ts
// Prints the functions with the most self time and leaves the .cpuprofile (for Chrome DevTools).

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printSelfTime } from "./cpu-profile.ts";
import { dnsperf } from "./dnsperf.ts";
import { generateCluster } from "./cluster-gen.ts";
import { serveWithCorefile, startClusterdns, untilSynced } from "./clusterdns-run.ts";
import { PIN, stop } from "./processes.ts";
import { mixChoice, mixQueries } from "./mixes.ts";

const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-profile-"));

const cluster = generateCluster({ services });
const queryFile = join(dir, "queries.txt");
writeFileSync(queryFile, mixQueries(cluster, mixChoice()).join("\n") + "\n");
const { api, corefile } = await serveWithCorefile(cluster, dir);
const { cd, port } = await startClusterdns(corefile, { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`] });
await untilSynced(cd);
const r = await dnsperf({ port, queryFile, seconds, core: PIN ? 1 : undefined });
console.log(`QPS ${r.qps.toFixed(0)}`);
await stop(cd.proc, 30_000); // the profile is written on exit, after kubeadm's 5 s of lameduck
await api.close();

printSelfTime(dir, 30);
