// auto end to end: a clusterdns process serving the zone files of a folder, asked with dig while the
// folder changes: a zone file added (in a subfolder too), one changed with a new serial, one changed
// without (kept, as CoreDNS), one removed, and one that does not parse (left out, logged).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digUntil } from "./helpers/dig.ts";

const zone = (origin: string, serial: number, address: string) =>
  `$ORIGIN ${origin}.\n$TTL 300\n@ SOA ns hostmaster ${serial} 3600 600 86400 60\n@ NS ns\nns A 192.0.2.53\nwww A ${address}\n`;

const COREFILE = `example.org example.net example.com bad.test {
    auto {
        directory .
        reload 200ms
    }
}
`;

let srv: RunningServer;
before(async () => {
  srv = await startServer(COREFILE, {
    files: {
      "db.example.org": zone("example.org", 1, "192.0.2.1"),
      "db.example.net": zone("example.net", 1, "192.0.2.2"),
      "db.bad.test": "$ORIGIN bad.test.\n@ SOA ns hostmaster 1 2 3 4 5\nwww A not-an-address\n",
      "notes.txt": "not a zone\n",
    },
  });
});
after(async () => {
  await srv.stop();
});

test("auto: every matching file is a zone; one that does not parse is left out with a line", async () => {
  assert.deepEqual((await dig(srv.port, "www.example.org", "A")).answer, [
    "www.example.org. 300 IN A 192.0.2.1",
  ]);
  const r = await dig(srv.port, "www.example.net", "A");
  assert.deepEqual(r.answer, ["www.example.net. 300 IN A 192.0.2.2"]);
  assert.ok(r.flags.includes("aa"));
  assert.equal((await dig(srv.port, "nope.example.org", "A")).status, "NXDOMAIN");
  const bad = srv.logs.find((l) => l.msg === "zone file left out: it does not load");
  assert.ok(bad, "the broken file is reported");
  assert.match(String(bad.err), /db\.bad\.test:3/);
  assert.equal((await dig(srv.port, "www.bad.test", "A")).status, "SERVFAIL");
});

test("auto: files added, changed (a new serial, or not), and removed, picked up at the next scan", async () => {
  writeFileSync(join(srv.dir, "db.example.org"), zone("example.org", 2, "192.0.2.11"));
  await digUntil(srv.port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.11"]);
  // Same serial: not reloaded (CoreDNS's rule), and said so.
  writeFileSync(join(srv.dir, "db.example.org"), zone("example.org", 2, "192.0.2.99") + "; edited\n");
  await waitFor(() =>
    srv.logs.some((l) => l.msg === "zone file changed without a new SOA serial; not reloaded"),
  );
  assert.deepEqual((await dig(srv.port, "www.example.org", "A")).answer, [
    "www.example.org. 300 IN A 192.0.2.11",
  ]);
  mkdirSync(join(srv.dir, "sub"));
  writeFileSync(join(srv.dir, "sub", "db.example.com"), zone("example.com", 1, "192.0.2.3"));
  await digUntil(srv.port, "www.example.com", "A", ["www.example.com. 300 IN A 192.0.2.3"]);
  rmSync(join(srv.dir, "db.example.net"));
  await digUntil(srv.port, "www.example.net", "A", "SERVFAIL");
});

async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), "not seen in 5 s");
}
