// What a geoip label costs when a plugin reads it: a City database of 20,000 networks in 500 cities
// written by MaxMind's writer (as the tests do), `geoip/country/code` read through the block's metadata for
// 200,000 queries, from 20,000 different client addresses in turn (a lookup in the file each time) and
// from one address (the lookup of the query before serves it). CPU ns per read, medians of the rounds.
//   node bench/geoip.ts [--rounds 3]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cityRecord, writeMmdb, type Network } from "../test/helpers/mmdb.ts";
import { directive, fakeContext } from "../test/helpers/setup-context.ts";
import { setup as metadata } from "../src/plugins/metadata/setup.ts";
import { setup as geoip } from "../src/plugins/geoip/setup.ts";
import { metadataOf } from "../src/plugins/metadata/labels.ts";

const { values } = parseArgs({ options: { rounds: { type: "string" } } });
const rounds = Number(values.rounds ?? 3);
const NETWORKS = 20_000;
const READS = 200_000;
const CITIES = 500;
const COUNTRIES = ["GB", "US", "DE", "FR", "JP", "BR", "IN", "ZA"];

const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-geoip-"));
const networks: Network[] = Array.from({ length: NETWORKS }, (_, i) => {
  const cc = COUNTRIES[i % COUNTRIES.length];
  return {
    network: `10.${i >> 8}.${i & 255}.0/24`,
    record: cityRecord({
      city: `City ${i % CITIES}`,
      country: cc,
      countryName: cc,
      continent: "EU",
      continentName: "Europe",
    }),
  };
});
writeMmdb(join(dir, "city.mmdb"), "GeoLite2-City", networks);
const f = fakeContext({ root: dir });
await metadata(directive("metadata"), f.ctx);
await geoip(directive("geoip", ["city.mmdb"]), f.ctx);
await f.start();
const label = metadataOf(f.ctx.block.shared)!.label("geoip/country/code");
const clients = Array.from({ length: NETWORKS }, (_, i) => ({
  qname: "www.example.org.",
  qtype: 1,
  remoteAddress: `10.${i >> 8}.${i & 255}.7`,
}));

function run(distinct: boolean): number {
  const start = process.cpuUsage();
  let n = 0;
  for (let i = 0; i < READS; i++) if (label.value(clients[distinct ? i % NETWORKS : 0]) !== undefined) n++;
  const used = process.cpuUsage(start);
  if (n !== READS) throw new Error(`${READS - n} reads had no value`);
  return ((used.user + used.system) * 1000) / READS;
}

const results: Record<string, number[]> = { distinct: [], same: [] };
run(true); // warm
for (let r = 0; r < rounds; r++) {
  for (const k of ["distinct", "same"] as const) results[k].push(run(k === "distinct"));
  console.log(
    `round ${r + 1}: ${results.distinct.at(-1)!.toFixed(0)} ns (distinct), ${results.same.at(-1)!.toFixed(0)} ns (same)`,
  );
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(
  `geoip/country/code, ${NETWORKS} networks: ${median(results.distinct).toFixed(0)} ns CPU per read from distinct clients, ${median(results.same).toFixed(0)} ns from one client (medians of ${rounds})`,
);
rmSync(dir, { recursive: true, force: true });
