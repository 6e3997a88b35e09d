// What dnstap costs: three clusterdns servers on one zone file, without dnstap, with it (a unix socket
// to Debian's real receiver, `dnstap -u SOCKET -w /dev/null`), and with it `full`; dnsperf loads them in
// alternating rounds (replayed answers: the cheapest query, so the largest share for dnstap). The
// receiver runs on dnsperf's core. Prints per
// round QPS, server CPU per answered query and the messages sent and dropped (from the metrics), then
// the medians.
//   node bench/dnstap.ts        (BENCH_SECONDS 5, BENCH_ROUNDS 3; BENCH_PIN=0 leaves them unpinned)

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import { sleep, startClusterdns } from "./clusterdns-run.ts";
import { PIN, cpuSecondsOf, stop, type Started } from "./processes.ts";
import { ROOT } from "../test/helpers/server.ts";
import { freePort } from "../test/helpers/free-port.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const seconds = env("BENCH_SECONDS", 5);
const rounds = env("BENCH_ROUNDS", 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-dnstap-"));
const socket = join(dir, "tap.sock");
const queries = join(dir, "queries");
writeFileSync(queries, ["www", "ns1", "ns2", "mail"].map((n) => `${n}.example.org A\n`).join(""));

// The receiver shares dnsperf's core, not the servers': its work is not the server's.
const receiverArgs = ["-u", socket, "-w", "/dev/null"];
const receiver = PIN
  ? spawn("taskset", ["-c", "1", "dnstap", ...receiverArgs], { stdio: "ignore" })
  : spawn("dnstap", receiverArgs, { stdio: "ignore" });
await sleep(500);

interface Variant {
  name: string;
  server: Started;
  port: number;
  metrics: number;
  qps: number[];
  cpuUs: number[];
  sent: number;
  dropped: number;
}

const variants: Variant[] = [];
for (const [name, line] of [
  ["off", ""],
  ["on", `dnstap ${socket}`],
  ["on, full", `dnstap ${socket} full`],
] as const) {
  const metrics = await freePort();
  const corefile = join(dir, `Corefile.${variants.length}`);
  writeFileSync(
    corefile,
    `example.org {\n  prometheus 127.0.0.1:${metrics}\n  ${line}\n  file ${join(ROOT, "zones", "example.org.zone")}\n}\n`,
  );
  const { cd, port } = await startClusterdns(corefile);
  variants.push({ name, server: cd, port, metrics, qps: [], cpuUs: [], sent: 0, dropped: 0 });
}
await sleep(1000);

/** clusterdns_dnstap_{messages,dropped}_total of a server, summed over endpoints. */
async function tapCounts(v: Variant): Promise<{ sent: number; dropped: number }> {
  const text = await (await fetch(`http://127.0.0.1:${v.metrics}/metrics`)).text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "gm"))].reduce((a, m) => a + Number(m[1]), 0);
  return { sent: sum("clusterdns_dnstap_messages_total"), dropped: sum("clusterdns_dnstap_dropped_total") };
}

console.log(`dnstap cost: ${rounds} rounds of ${seconds} s, pinned: ${PIN}`);
for (let r = 0; r < rounds; r++) {
  // Each round starts with the next variant: a place in the round gives none of them an edge.
  for (const v of [...variants.slice(r % variants.length), ...variants.slice(0, r % variants.length)]) {
    const before = cpuSecondsOf(v.server.proc.pid);
    const counts = await tapCounts(v);
    const p = await dnsperf({ port: v.port, queryFile: queries, seconds, core: PIN ? 1 : undefined });
    const cpu = cpuSecondsOf(v.server.proc.pid) - before;
    const after = await tapCounts(v);
    v.qps.push(p.qps);
    v.cpuUs.push((cpu / p.completed) * 1e6);
    v.sent += after.sent - counts.sent;
    v.dropped += after.dropped - counts.dropped;
    console.log(
      `round ${r + 1} ${v.name.padEnd(9)} ${p.qps.toFixed(0).padStart(7)} QPS  ` +
        `${((cpu / p.completed) * 1e6).toFixed(2)} us CPU/query  lost ${p.lost}  ` +
        `dnstap sent ${after.sent - counts.sent} dropped ${after.dropped - counts.dropped}`,
    );
  }
}
console.log("\nmedians:");
for (const v of variants) {
  console.log(
    `${v.name.padEnd(9)} ${median(v.qps).toFixed(0).padStart(7)} QPS  ${median(v.cpuUs).toFixed(2)} us CPU/query  ` +
      `dnstap messages sent ${v.sent}, dropped ${v.dropped}`,
  );
}

for (const v of variants) await stop(v.server.proc, 0);
receiver.kill("SIGTERM");
rmSync(dir, { recursive: true, force: true });
