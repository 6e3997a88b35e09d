// The AD bit of forwarded and cached answers, behind a real validating resolver: clusterdns serves a
// signed zone, Unbound validates it (AD on what it could validate, for a client that asked with AD or
// DO), and a second clusterdns forwards to Unbound. A reply kept for one client (with AD) must not
// carry AD to a client that set neither AD nor DO (RFC 6840 5.7-5.8; CoreDNS's cache clears it too).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { dnskeyLine, keygen } from "./helpers/dnssec-tools.ts";
import { startUnboundValidator, type UnboundValidator } from "./upstream/unbound-validator.ts";

const ZONE = zoneText("example.test", "www 120 IN A 192.0.2.33", "other 120 IN A 192.0.2.34");

describe("the AD bit through forward and cache", () => {
  let dir: string;
  let auth: RunningServer;
  let unbound: UnboundValidator;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-ad-"));
    const key = keygen(dir, "example.test", "ECDSAP256SHA256", true);
    auth = await startServer(
      `example.test {
    dnssec {
        key file ${key}.private
    }
    file db.example.test
}
`,
      { files: { "db.example.test": ZONE } },
    );
    unbound = await startUnboundValidator({ "example.test.": dnskeyLine(key) }, auth.port);
  });

  after(async () => {
    await unbound?.stop();
    await auth?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [label, extra] of [
    ["forward alone (its one-second replay)", ""],
    ["forward behind cache", "    cache 30\n"],
  ]) {
    it(`${label}: AD only for a client that set AD or DO`, async () => {
      const srv = await startServer(`. {\n${extra}    forward . 127.0.0.1:${unbound.port}\n}\n`);
      try {
        for (const name of ["www.example.test", "other.example.test"]) {
          const first = await dig(srv.port, name, "A", "+adflag");
          assert.ok(first.flags.includes("ad"), `validated, asked with AD: ${first.text}`);
          const plain = await dig(srv.port, name, "A", "+noadflag");
          assert.equal(plain.status, "NOERROR", plain.text);
          assert.ok(!plain.flags.includes("ad"), `neither AD nor DO asked: no AD\n${plain.text}`);
          const again = await dig(srv.port, name, "A", "+adflag");
          assert.ok(again.flags.includes("ad"), `asked with AD again: ${again.text}`);
        }
      } finally {
        await srv.stop();
      }
    });
  }
});
