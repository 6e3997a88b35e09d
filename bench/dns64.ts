// What dns64 costs on AAAA queries, over IPv6 (dnsperf -s ::1): 1,000 names of a zone file that have
// only an A record, each asked for AAAA, with `cache 30`, in four set-ups, each a fresh server,
// alternating in rounds; QPS and the server's CPU per answered query (from /proc, which the machine's
// load moves far less than QPS), medians printed:
//   none       no dns64: NODATA, replayed from the answer store
//   v6-only    dns64 in a block bound to ::1: synthesized once, then replayed
//   dual       dns64 in a block on both families (no bind), without allow_ipv4: the reply depends on
//              the client's family, which the answer store keys apart (BlockSettings.familyKeys)
//   allow_ipv4 dns64 allow_ipv4 on both families: synthesized once, then replayed
// Usage: node bench/dns64.ts [--rounds 3] [--seconds 5]

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startServer } from "../test/helpers/server.ts";
import { dnsperf } from "./dnsperf.ts";

const { values } = parseArgs({ options: { rounds: { type: "string" }, seconds: { type: "string" } } });
const rounds = Number(values.rounds ?? 3);
const seconds = Number(values.seconds ?? 5);
const NAMES = 1000;

const VARIANTS: Record<string, string> = {
  none: "",
  "v6-only": "bind ::1\n    dns64",
  dual: "dns64",
  allow_ipv4: "dns64 {\n        allow_ipv4\n    }",
};

const zone = [
  "$ORIGIN example.test.",
  "@ 300 IN SOA ns hostmaster 1 60 60 60 60",
  "@ 300 IN NS ns",
  "ns 300 IN A 192.0.2.53",
  ...Array.from({ length: NAMES }, (_, i) => `h${i} 300 IN A 10.0.${i >> 8}.${i & 255}`),
  "",
].join("\n");

const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-dns64-"));
const queries = join(dir, "queries");
writeFileSync(queries, Array.from({ length: NAMES }, (_, i) => `h${i}.example.test AAAA`).join("\n") + "\n");

const qps: Record<string, number[]> = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));

/** CPU seconds the process used so far (utime + stime; USER_HZ is 100 on Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
try {
  for (let r = 0; r < rounds; r++) {
    for (const [name, lines] of Object.entries(VARIANTS)) {
      const srv = await startServer(`example.test {\n    ${lines}\n    cache 30\n    file db\n}\n`, {
        files: { db: zone },
      });
      try {
        const before = cpuSeconds(srv.proc.pid!);
        const res = await dnsperf({ port: srv.port, server: "::1", queryFile: queries, seconds });
        const us = ((cpuSeconds(srv.proc.pid!) - before) * 1e6) / res.completed;
        qps[name].push(res.qps);
        cpu[name].push(us);
        console.log(
          `round ${r + 1} ${name}: ${Math.round(res.qps)} QPS, ${us.toFixed(1)} us CPU/query, lost ${res.lost}`,
        );
      } finally {
        await srv.stop();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, xs] of Object.entries(qps)) {
  console.log(`median ${name}: ${Math.round(median(xs))} QPS, ${median(cpu[name]).toFixed(1)} us CPU/query`);
}
