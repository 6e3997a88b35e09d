// Forwarding A/B: what a query's transport to the upstream costs. Two or more checkouts of clusterdns
// each forward every query to one Knot on loopback, whose wildcard zone makes every name of the query
// file new (so the answer cache never answers and every query goes upstream), and dnsperf loads them
// in alternating rounds. Then, for each checkout, 2,000 sequential queries (new names) go through it
// to a small upstream of this script that notes each query's source port, and the ports are counted.
//   git archive main | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   node bench/forward-transport.ts /tmp/before .        (BENCH_SECONDS, BENCH_ROUNDS)
// Prints a table of QPS and server CPU per query for each round, and the port counts.

import dgram from "node:dgram";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dnsperf } from "./dnsperf.ts";
import { startKnot } from "./knot.ts";
import { startClusterdns } from "./clusterdns-run.ts";
import { PIN, cpuSecondsOf, stop, type Started } from "./processes.ts";
import { freeUdpTcpPort } from "../test/helpers/free-port.ts";
import { udpExchange } from "../src/client/udp-exchange.ts";
import { newQuery, replyTo } from "../src/dns/message.ts";
import { decode } from "../src/dns/decode.ts";
import { encode } from "../src/dns/encode.ts";
import { Type } from "../src/dns/constants.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const seconds = env("BENCH_SECONDS", 5);
const rounds = env("BENCH_ROUNDS", 4);
const SEQUENTIAL = 2000;
const checkouts = process.argv.slice(2).map((p) => ({ name: p, path: resolve(p) }));
if (checkouts.length < 2) {
  console.error("usage: node bench/forward-transport.ts CHECKOUT CHECKOUT...");
  process.exit(2);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), "clusterdns-fwd-"));
const zoneFile = join(dir, "fwd.test.zone");
writeFileSync(
  zoneFile,
  "$ORIGIN fwd.test.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 60\n@ NS ns\nns A 127.0.0.1\n* A 192.0.2.1\n",
);
// 300k names: at ~10k QPS a pass takes 30 s, so no name is asked twice within the 1 s answer cache.
const queryFile = join(dir, "queries.txt");
writeFileSync(queryFile, Array.from({ length: 300_000 }, (_, i) => `n${i}.fwd.test A`).join("\n") + "\n");

/** Counts the source ports of SEQUENTIAL queries forwarded by the checkout at `path`. */
async function sourcePorts(path: string): Promise<number> {
  const up = dgram.createSocket("udp4");
  await new Promise<void>((r) => up.bind(0, "127.0.0.1", r));
  const ports = new Set<number>();
  up.on("message", (pkt, rinfo) => {
    ports.add(rinfo.port);
    up.send(encode(replyTo(decode(pkt))), rinfo.port, rinfo.address);
  });
  const corefile = join(dir, "Corefile.ports");
  writeFileSync(corefile, `. {\n    forward . 127.0.0.1:${up.address().port}\n}\n`);
  const { cd, port } = await startClusterdns(corefile, {
    checkout: path,
    env: { CLUSTERDNS_FROM_SOURCE: "1" },
  });
  try {
    for (let i = 0; i < SEQUENTIAL; i++) {
      await udpExchange("127.0.0.1", port, newQuery(`p${i}.ports.test.`, Type.A, 1, i), 2000);
    }
  } finally {
    await stop(cd.proc);
    up.close();
  }
  return ports.size;
}

interface Contender {
  name: string;
  server: Started;
  port: number;
  qps: number[];
  cpu: number[];
  lost: number[];
}

const knotPort = await freeUdpTcpPort();
const knot = await startKnot("fwd.test", zoneFile, knotPort);
const corefile = join(dir, "Corefile");
writeFileSync(corefile, `. {\n    forward . 127.0.0.1:${knotPort}\n}\n`);
const core = PIN ? 1 : undefined;
const contenders: Contender[] = [];
try {
  for (const c of checkouts) {
    const { cd: server, port } = await startClusterdns(corefile, {
      checkout: c.path,
      env: { CLUSTERDNS_FROM_SOURCE: "1" },
    });
    await dnsperf({ port, queryFile, seconds: 1, core }); // warm-up
    contenders.push({ name: c.name, server, port, qps: [], cpu: [], lost: [] });
  }
  for (let round = 0; round < rounds; round++) {
    for (const c of contenders) {
      const before = cpuSecondsOf(c.server.proc.pid);
      const r = await dnsperf({ port: c.port, queryFile, seconds, core });
      c.qps.push(r.qps);
      c.lost.push(r.lost);
      c.cpu.push(((cpuSecondsOf(c.server.proc.pid) - before) * 1e6) / r.completed);
    }
  }
} finally {
  for (const c of contenders) await stop(c.server.proc);
  await stop(knot.proc);
}
const base = median(contenders[0].qps);
console.log(
  `| checkout | QPS per round | QPS median (vs first) | CPU us/query median | lost | ports for ${SEQUENTIAL} sequential queries |`,
);
console.log("|---|---|---|---|---|---|");
for (const c of contenders) {
  const ports = await sourcePorts(checkouts.find((x) => x.name === c.name)!.path);
  const q = c.qps.map((x) => x.toFixed(0)).join(" / ");
  console.log(
    `| ${c.name} | ${q} | ${median(c.qps).toFixed(0)} (${(median(c.qps) / base).toFixed(2)}) | ${median(c.cpu).toFixed(1)} | ${c.lost.reduce((a, b) => a + b, 0)} | ${ports} |`,
  );
}
