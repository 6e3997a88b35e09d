// sign: a zone file signed offline by a real clusterdns at start-up (a CSK made by dnssec-keygen),
// the written file checked by BIND's dnssec-verify and ldns-verify-zone, then served by the block's
// `file` and validated by delv with the key as trust anchor: a positive answer, a NODATA and an
// NXDOMAIN proven from the NSEC chain; a flipped signature octet fails. The resigning schedule is
// checked on the written file: kept while good, redone when the source changes or time passes.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { anchorFile, delv, keygen, tamperingRelay } from "./helpers/dnssec-tools.ts";
import { readKeyPair } from "../src/dnssec/keys.ts";
import { resignReason, signInto, type ZoneJob } from "../src/plugins/sign/resign.ts";

const ZONE = zoneText(
  "offline.test",
  "www 120 IN A 192.0.2.33",
  "alias 60 IN CNAME www",
  'txt 60 IN TXT "hello"',
  "a.b.deep 60 IN A 192.0.2.9",
  "sub 60 IN NS ns.sub",
  "ns.sub 60 IN A 192.0.2.77",
);

describe("sign writes a signed zone that BIND's tools verify and file serves, validated by delv", () => {
  let dir: string;
  let srv: RunningServer;
  let anchor: string;
  let key: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-sign-"));
    key = keygen(dir, "offline.test", "ECDSAP256SHA256", true);
    anchor = anchorFile(dir, key);
    srv = await startServer(
      `offline.test {
    file signed/db.offline.test.signed
    sign db.offline.test {
        key file ${key}
        directory signed
    }
}
`,
      { files: { "db.offline.test": ZONE } },
    );
  });

  after(async () => {
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const signedFile = () => join(srv.dir, "signed", "db.offline.test.signed");

  it("the written file passes dnssec-verify and ldns-verify-zone, with the serial bumped", () => {
    // -z: the one key is a CSK with the SEP bit (as CoreDNS's sign wants), not a KSK beside a ZSK.
    const out = execFileSync("dnssec-verify", ["-z", "-o", "offline.test", signedFile()], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    assert.match(out, /Zone fully signed/, out);
    execFileSync("ldns-verify-zone", [signedFile()], { stdio: "ignore" });
    const soa = /SOA\s+\S+\s+\S+\s+(\d+)/.exec(readFileSync(signedFile(), "latin1"))!;
    assert.ok(Number(soa[1]) > 1_700_000_000, soa[0]);
  });

  const cases: [string, string, RegExp][] = [
    ["www.offline.test", "A", /^; fully validated\nwww\.offline\.test\.\s+\d+\s+IN\s+A\s+192\.0\.2\.33/m],
    ["alias.offline.test", "A", /^; fully validated\nalias\.offline\.test\.\s+\d+\s+IN\s+CNAME/m],
    ["offline.test", "DNSKEY", /^; fully validated\noffline\.test\.\s+\d+\s+IN\s+DNSKEY\s+257/m],
    ["www.offline.test", "TXT", /^; negative response, fully validated$/m],
    ["deep.offline.test", "A", /^; negative response, fully validated$/m],
    ["nope.offline.test", "A", /^; negative response, fully validated$/m],
  ];
  for (const [name, type, want] of cases) {
    it(`delv validates ${name} ${type}`, async () => {
      const out = await delv(anchor, "offline.test.", srv.port, name, type);
      assert.match(out, want, out);
    });
  }

  it("a referral to a child without DS carries the cut's NSEC, signed, and no RRSIG of the NS", async () => {
    const r = await dig(srv.port, "ns.sub.offline.test", "A", "+dnssec", "+norec");
    const types = r.authority.map((l) => l.split(" ").slice(3, 5).join(" "));
    assert.ok(
      r.authority.some((l) => l.startsWith("sub.offline.test. ") && l.includes(" NSEC ")),
      r.text,
    );
    assert.ok(types.includes("RRSIG NSEC"), r.text);
    assert.ok(!types.includes("RRSIG NS"), r.text);
  });

  it("a reply with one signature octet flipped fails validation", async () => {
    const relay = await tamperingRelay(srv.port);
    try {
      const out = await delv(anchor, "offline.test.", relay.port, "www.offline.test", "A");
      assert.doesNotMatch(out, /fully validated/, out);
      assert.match(out, /resolution failed|verify failure|no valid signature/i, out);
    } finally {
      relay.close();
    }
  });

  it("DO=0 gets the zone without its DNSSEC records", async () => {
    const r = await dig(srv.port, "nope.offline.test", "A");
    assert.equal(r.status, "NXDOMAIN");
    assert.ok(!/RRSIG|NSEC/.test(r.text), r.text);
  });
});

describe("sign's schedule", () => {
  let dir: string;
  let job: ZoneJob;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-sign-schedule-"));
    writeFileSync(join(dir, "db.offline.test"), ZONE);
    job = {
      origin: "offline.test.",
      source: join(dir, "db.offline.test"),
      output: join(dir, "out", "db.offline.test.signed"),
      keys: [readKeyPair(keygen(dir, "offline.test", "ED25519"))],
    };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("signs when there is no file, keeps a fresh one, resigns after 6 days (jitter included) or on a source change", () => {
    const now = 1_800_000_000;
    assert.equal(resignReason(job, now), "no signed file yet");
    signInto(job, now, 0);
    assert.equal(resignReason(job, now), undefined);
    assert.equal(resignReason(job, now + 5 * 86400), undefined);
    assert.equal(resignReason(job, now + 6 * 86400 + 1), "signed more than 6 days ago");
    // The most jitter (18 hours back) makes the 6 days come that much sooner.
    signInto(job, now, 0.999999);
    assert.equal(resignReason(job, now + 5 * 86400 + 7 * 3600), "signed more than 6 days ago");
    signInto(job, now, 0);
    writeFileSync(job.source, ZONE + "new 60 IN A 192.0.2.1\n");
    assert.equal(resignReason(job, now), "the source file changed");
    signInto(job, now, 0);
    assert.match(readFileSync(job.output, "latin1"), /^new\.offline\.test\./m);
    assert.equal(basename(job.output), "db.offline.test.signed");
  });
});
