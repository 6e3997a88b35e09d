// What relaying over DNS-over-gRPC costs against forwarding over TCP: a "front" clusterdns sends the
// names under g.b.test to a "back" clusterdns's grpc:// listener with the grpc plugin, and those under
// t.b.test to the back's DNS port with forward's force_tcp; the back forwards both to one Knot, whose
// wildcard makes every name new (so no answer cache answers). dnsperf loads the two zones in
// alternating rounds; CPU per query is read from /proc for the front (the upstream client's cost) and
// the back (the listener's).
//   node bench/grpc-upstream.ts [--profile]   (BENCH_SECONDS, BENCH_ROUNDS; BENCH_PIN=0 to not pin)
// With --profile, the front runs under V8's profiler and the functions with the most self time are
// printed (the profiler slows it down: its figures are then not comparable).

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import { startKnot } from "./knot.ts";
import { startClusterdns } from "./clusterdns-run.ts";
import { PIN, cpuSecondsOf, stop } from "./processes.ts";
import { freePort, freeUdpTcpPort } from "../test/helpers/free-port.ts";
import { printSelfTime } from "./cpu-profile.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const seconds = env("BENCH_SECONDS", 5);
const rounds = env("BENCH_ROUNDS", 4);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), "clusterdns-grpc-bench-"));
const zoneFile = join(dir, "b.test.zone");
writeFileSync(
  zoneFile,
  "$ORIGIN b.test.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 60\n@ NS ns\nns A 127.0.0.1\n* A 192.0.2.1\n",
);
const ways = [
  { name: "grpc (h2c)", zone: "g.b.test" },
  { name: "forward force_tcp", zone: "t.b.test" },
];
const files = ways.map((w) => {
  const file = join(dir, `${w.zone}.queries`);
  writeFileSync(file, Array.from({ length: 300_000 }, (_, i) => `n${i}.${w.zone} A`).join("\n") + "\n");
  return file;
});

const [knotPort, backDns, backGrpc, frontPort] = [
  await freeUdpTcpPort(),
  await freeUdpTcpPort(),
  await freePort(),
  await freeUdpTcpPort(),
];
const knot = await startKnot("b.test", zoneFile, knotPort);
const backFile = join(dir, "Corefile.back");
writeFileSync(
  backFile,
  `grpc://.:${backGrpc} {\n    forward . 127.0.0.1:${knotPort}\n}\n` +
    `.:${backDns} {\n    forward . 127.0.0.1:${knotPort}\n}\n`,
);
const frontFile = join(dir, "Corefile.front");
writeFileSync(
  frontFile,
  `g.b.test:${frontPort} {\n    grpc . 127.0.0.1:${backGrpc}\n}\n` +
    `t.b.test:${frontPort} {\n    forward . 127.0.0.1:${backDns} {\n        force_tcp\n    }\n}\n`,
);
const env0 = { env: { CLUSTERDNS_FROM_SOURCE: "1" } };
const back = (await startClusterdns(backFile, env0)).cd;
const profile = process.argv.includes("--profile") ? join(dir, "profile") : undefined;
const front = (
  await startClusterdns(frontFile, {
    ...env0,
    nodeFlags: profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [],
  })
).cd;
const core = PIN ? 1 : undefined;
const rows = ways.map(() => ({ qps: [] as number[], front: [] as number[], back: [] as number[], lost: 0 }));
try {
  for (const file of files) await dnsperf({ port: frontPort, queryFile: file, seconds: 1, core }); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const [i, file] of files.entries()) {
      const f0 = cpuSecondsOf(front.proc.pid);
      const b0 = cpuSecondsOf(back.proc.pid);
      const r = await dnsperf({ port: frontPort, queryFile: file, seconds, core });
      rows[i].qps.push(r.qps);
      rows[i].lost += r.lost;
      rows[i].front.push(((cpuSecondsOf(front.proc.pid) - f0) * 1e6) / r.completed);
      rows[i].back.push(((cpuSecondsOf(back.proc.pid) - b0) * 1e6) / r.completed);
    }
  }
} finally {
  await stop(front.proc);
  await stop(back.proc);
  await stop(knot.proc);
}
console.log("| front to back | QPS per round | QPS median | front CPU us/query | back CPU us/query | lost |");
console.log("|---|---|---|---|---|---|");
for (const [i, w] of ways.entries()) {
  const r = rows[i];
  const q = r.qps.map((x) => x.toFixed(0)).join(" / ");
  console.log(
    `| ${w.name} | ${q} | ${median(r.qps).toFixed(0)} | ${median(r.front).toFixed(1)} | ${median(r.back).toFixed(1)} | ${r.lost} |`,
  );
}
if (profile) printSelfTime(profile, 25);
