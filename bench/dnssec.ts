// What dnssec costs, in CPU per query, with the pipeline driven in this process (no socket, as
// bench/miss-path.ts): a zone file of 2,000 names asked with DO=1 for A (a positive answer), TXT (a
// NODATA: the NSEC lists the name's types, found by an ANY lookup) and A of names that do not exist
// (NXDOMAIN made a black lie), in three set-ups, alternating in rounds, medians printed:
//   plain         no dnssec: the zone's answers unsigned
//   warm          dnssec, every signature already in its cache
//   cold          dnssec with cache_capacity 0: every RRset signed again, every query
// The answer store keeps these replies whatever the set-up, so each kind is asked three times: with CD=0
// (fills the signature cache), with CD=1 (another key of the answer store, so the chain answers: timed
// as "chain") and with CD=1 again (timed as "replay": what most queries of a running server cost).
// Keys: one ECDSAP256SHA256 key made by dnssec-keygen (bind9-utils).
// Usage: node bench/dnssec.ts [--rounds 3] [--names 2000]

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { readyInstance } from "../test/helpers/instance.ts";
import { encode } from "../src/dns/encode.ts";
import { newQuery } from "../src/dns/message.ts";
import { answerCacheStats } from "../src/metrics/server-stats.ts";
import { LOOPBACK_PEER } from "./in-process.ts";
import { zoneText } from "../test/helpers/zone-text.ts";

const { values } = parseArgs({ options: { rounds: { type: "string" }, names: { type: "string" } } });
const rounds = Number(values.rounds ?? 3);
const NAMES = Number(values.names ?? 2000);

const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-dnssec-"));
const key = execFileSync("dnssec-keygen", ["-q", "-K", dir, "-a", "ECDSAP256SHA256", "example.test"], {
  encoding: "utf8",
}).trim();
writeFileSync(
  join(dir, "db"),
  zoneText(
    "example.test",
    ...Array.from({ length: NAMES }, (_, i) => `h${i} 300 IN A 10.0.${i >> 8}.${i & 255}`),
  ),
);

const SETUPS: Record<string, string> = {
  plain: "file db",
  warm: `dnssec {\n        key file ${key}\n    }\n    file db`,
  cold: `dnssec {\n        key file ${key}\n        cache_capacity 0\n    }\n    file db`,
};
const KINDS: Record<string, (i: number) => [string, number]> = {
  positive: (i) => [`h${i}.example.test.`, 1],
  nodata: (i) => [`h${i}.example.test.`, 16],
  nxdomain: (i) => [`nope${i}.example.test.`, 1],
};

const packets = (kind: string, cd: boolean) =>
  Array.from({ length: NAMES }, (_, i) => {
    const [name, type] = KINDS[kind](i);
    const q = newQuery(name, type, 1, i & 0xffff);
    q.cd = cd;
    q.edns = { udpSize: 1232, version: 0, do: true, options: [] };
    return encode(q);
  });
const peer = LOOPBACK_PEER;
const outBuf = Buffer.alloc(128 * 1024);

const cpu: Record<string, number[]> = {};
const replayed: Record<string, number> = {};
try {
  for (let r = 0; r < rounds; r++) {
    for (const [setup, lines] of Object.entries(SETUPS)) {
      const inst = await readyInstance(`example.test {\n    ${lines}\n}\n`, dir);
      const pipeline = inst.pipelines[0];
      const pass = async (list: Buffer[]) => {
        for (const p of list) {
          const out = pipeline.handleInto(p, p.length, peer, outBuf, 0);
          if (out instanceof Promise) await out;
        }
      };
      for (const kind of Object.keys(KINDS)) {
        await pass(packets(kind, false));
        const list = packets(kind, true);
        for (const how of ["chain", "replay"]) {
          const hits = answerCacheStats.hits;
          const t = process.cpuUsage();
          await pass(list);
          const used = process.cpuUsage(t);
          const k = `${setup} ${kind} ${how}`;
          (cpu[k] ??= []).push(((used.user + used.system) * 1000) / list.length);
          replayed[k] = (100 * (answerCacheStats.hits - hits)) / list.length;
        }
      }
      await inst.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [k, xs] of Object.entries(cpu)) {
  console.log(
    `${k.padEnd(24)} ${(median(xs) / 1000).toFixed(1).padStart(7)} us CPU/query (rounds: ${xs.map((x) => (x / 1000).toFixed(1)).join(", ")}), replayed ${replayed[k].toFixed(0)}%`,
  );
}
process.exit(0);
