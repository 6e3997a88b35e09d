// geoip end to end: a real clusterdns whose view blocks choose by the client's country, from a City
// database written by MaxMind's own writer. Clients on different loopback addresses, and clients that
// send an EDNS Client Subnet option (dig +subnet), get different answers for one name, again and again
// (so the answer store replays them), and log lines carry the labels mmdblookup reads from the file.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startFailure, startServer, type RunningServer } from "./helpers/server.ts";
import { parseDig, type DigResult } from "./helpers/dig.ts";
import { CAMBRIDGE, cityRecord, mmdbLookup, writeMmdb } from "./helpers/mmdb.ts";

const run = promisify(execFile);

const US = cityRecord({
  city: "Boston",
  country: "US",
  countryName: "United States",
  continent: "NA",
  continentName: "North America",
  latitude: 42.3601,
  longitude: -71.0589,
  subdivisions: ["MA"],
});

const LOG = `log . "{remote} {name} cc={/geoip/country/code} city={/geoip/city/name} lat={/geoip/latitude} sub={/geoip/subdivisions/code}"`;

/** Views first, then the catch-all: the first block whose view matches answers. */
const corefile = (db: string) => `example.org {
    view gb {
        expr metadata('geoip/country/code') == 'GB'
    }
    metadata
    geoip ${db} {
        edns-subnet
    }
    ${LOG}
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 192.0.2.44"
    }
}
example.org {
    view us {
        expr metadata('geoip/country/code') == 'US'
    }
    metadata
    geoip ${db} {
        edns-subnet
    }
    ${LOG}
    cache 30
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 192.0.2.1"
    }
}
example.org {
    metadata
    geoip ${db}
    ${LOG}
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 192.0.2.99"
    }
}
`;

async function digFrom(port: number, from: string, ...opts: string[]): Promise<DigResult> {
  const args = ["@127.0.0.1", "-b", from, "-p", String(port), "www.example.org", "A", "+tries=1", "+time=3"];
  const { stdout } = await run("dig", [...args, ...opts], { timeout: 15_000 });
  return parseDig(stdout);
}

/** The log line of the query `ask` sends from `from`: log writes it after the reply, so the test waits
 * for it (up to 10 s). */
async function loggedFor(srv: RunningServer, from: string, ask: () => Promise<unknown>) {
  const mine = () => srv.logs.filter((l) => l.remote === from);
  const before = mine().length;
  await ask();
  for (let waited = 0; mine().length === before && waited < 10_000; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return mine().at(-1)!;
}

const rdata = (r: DigResult) => r.answer.map((l) => l.split(/\s+/).at(-1)).join(",");

describe("geoip: answers chosen by the client's country", () => {
  let tmp: string;
  let db: string;
  let srv: RunningServer;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "clusterdns-geoip-"));
    db = join(tmp, "city.mmdb");
    writeMmdb(db, "GeoLite2-City", [
      { network: "127.0.0.2/32", record: CAMBRIDGE },
      { network: "127.0.0.3/32", record: US },
      { network: "198.51.100.0/24", record: CAMBRIDGE },
      { network: "203.0.113.0/24", record: US },
    ]);
    srv = await startServer(corefile(db), { timeoutMs: 60_000 });
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    rmSync(tmp, { recursive: true, force: true });
  });

  it("each source address and each client subnet gets its country's answer, on every repeat", async () => {
    const cases: [string, string[], string][] = [
      ["127.0.0.2", [], "192.0.2.44"], // GB by its source
      ["127.0.0.3", [], "192.0.2.1"], // US by its source
      ["127.0.0.4", [], "192.0.2.99"], // in no network: the catch-all
      ["127.0.0.4", ["+subnet=198.51.100.0/24"], "192.0.2.44"], // GB by its subnet
      ["127.0.0.2", ["+subnet=203.0.113.7/24"], "192.0.2.1"], // the subnet wins over the source
      ["127.0.0.3", ["+subnet=192.0.2.0/24"], "192.0.2.99"], // a subnet in no network
    ];
    for (let round = 0; round < 3; round++) {
      for (const tcp of [[], ["+tcp"]]) {
        for (const [from, opts, want] of cases) {
          const r = await digFrom(srv.port, from, ...opts, ...tcp);
          const what = `${from} ${opts.join(" ")} ${tcp.join(" ")} round ${round}`;
          assert.equal(r.status, "NOERROR", what);
          assert.equal(rdata(r), want, `${what}: ${r.text}`);
        }
      }
    }
  });

  it("log lines carry the labels mmdblookup reads from the same file", async () => {
    const line = await loggedFor(srv, "127.0.0.3", () => digFrom(srv.port, "127.0.0.3"));
    const [cc, city, lat, sub] = await Promise.all([
      mmdbLookup(db, "127.0.0.3", "country", "iso_code"),
      mmdbLookup(db, "127.0.0.3", "city", "names", "en"),
      mmdbLookup(db, "127.0.0.3", "location", "latitude"),
      mmdbLookup(db, "127.0.0.3", "subdivisions", "0", "iso_code"),
    ]);
    assert.deepEqual([cc, city, Number(lat), sub], ["US", "Boston", 42.3601, "MA"]);
    assert.equal(line.msg, `127.0.0.3 www.example.org. cc=${cc} city=${city} lat=42.3601 sub=${sub}`);
    // The client subnet's labels, read by log after the reply (from the query's OPT record).
    const subnet = await loggedFor(srv, "127.0.0.5", () =>
      digFrom(srv.port, "127.0.0.5", "+subnet=198.51.100.9/24"),
    );
    assert.equal(subnet.msg, "127.0.0.5 www.example.org. cc=GB city=Cambridge lat=52.2242 sub=ENG,CAM");
    // Not in the database: CoreDNS's empty values.
    const none = await loggedFor(srv, "127.0.0.4", () => digFrom(srv.port, "127.0.0.4"));
    assert.equal(none.msg, "127.0.0.4 www.example.org. cc= city= lat= sub=");
  });
});

describe("geoip: a bad database stops start-up at its line", () => {
  it("names the Corefile's line and what is wrong with the file", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "clusterdns-geoip-"));
    try {
      writeFileSync(join(tmp, "bad.mmdb"), "not a MaxMind database\n");
      const r = await startFailure(`. {\n    metadata\n    geoip ${join(tmp, "bad.mmdb")}\n}\n`);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr + r.stdout, /Corefile:3 - .*geoip: '.*bad\.mmdb' is not a MaxMind DB file/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
