// `file` serving a signed zone: the zone signed offline by BIND's dnssec-signzone (NSEC, a KSK and a
// ZSK from dnssec-keygen), served by a real clusterdns, and its answers validated by BIND's delv with
// the KSK as trust anchor: positive answers, a CNAME, a wildcard, NODATA (also at an empty
// non-terminal) and NXDOMAIN proven from the zone's NSEC chain; a flipped signature octet fails; DO=0
// gets no DNSSEC records.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { anchorFile, delv, keygen, tamperingRelay } from "./helpers/dnssec-tools.ts";

const ZONE = zoneText(
  "signed.test",
  "www 120 IN A 192.0.2.33",
  "www 120 IN A 192.0.2.34",
  "alias 60 IN CNAME www",
  'txt 60 IN TXT "hello"',
  "a.b.deep 60 IN A 192.0.2.9",
  "*.wild 60 IN TXT any",
  "dangling 60 IN CNAME gone",
  "child 60 IN NS ns.child",
  "ns.child 60 IN A 192.0.2.10",
  "child 60 IN DS 12345 13 2 0123456789ABCDEF0123456789ABCDEF 0123456789ABCDEF0123456789ABCDEF",
  "plain 60 IN NS ns.child",
);

describe("file serves a zone signed by dnssec-signzone, validated by delv", () => {
  let dir: string;
  let srv: RunningServer;
  let anchor: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-file-signed-"));
    const ksk = keygen(dir, "signed.test", "ECDSAP256SHA256", true);
    const zsk = keygen(dir, "signed.test", "ECDSAP256SHA256");
    anchor = anchorFile(dir, ksk);
    const db = join(dir, "db.signed.test");
    writeFileSync(db, ZONE);
    execFileSync("dnssec-signzone", [
      "-q",
      "-S",
      "-K",
      dir,
      "-d",
      dir,
      "-o",
      "signed.test",
      "-f",
      `${db}.signed`,
      db,
    ]);
    assert.ok(zsk.length > 0);
    srv = await startServer("signed.test {\n    file db.signed.test.signed\n}\n", {
      files: { "db.signed.test.signed": readFileSync(`${db}.signed`, "utf8") },
    });
  });

  after(async () => {
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [string, string, RegExp][] = [
    ["www.signed.test", "A", /^; fully validated\nwww\.signed\.test\.\s+\d+\s+IN\s+A\s+192\.0\.2\.3/m],
    ["alias.signed.test", "A", /^; fully validated\nalias\.signed\.test\.\s+\d+\s+IN\s+CNAME/m],
    ["signed.test", "DNSKEY", /^; fully validated\nsigned\.test\.\s+\d+\s+IN\s+DNSKEY/m],
    ["signed.test", "SOA", /^; fully validated\nsigned\.test\.\s+\d+\s+IN\s+SOA/m],
    [
      "x.y.wild.signed.test",
      "TXT",
      /^; fully validated\nx\.y\.wild\.signed\.test\.\s+\d+\s+IN\s+TXT\s+"any"/m,
    ],
    ["www.signed.test", "TXT", /^; negative response, fully validated$/m],
    ["deep.signed.test", "A", /^; negative response, fully validated$/m],
    ["nope.signed.test", "A", /^; negative response, fully validated$/m],
    ["zzz.signed.test", "A", /^; negative response, fully validated$/m],
    ["x.wild.signed.test", "A", /^; negative response, fully validated$/m],
    // The DS of a secure delegation, and the proof that an insecure one has none: the parent's answers.
    ["child.signed.test", "DS", /^; fully validated\nchild\.signed\.test\.\s+\d+\s+IN\s+DS\s+12345 13 2 /m],
    ["plain.signed.test", "DS", /^; negative response, fully validated$/m],
    // A CNAME into a name that does not exist: the denial is proven for the target.
    ["dangling.signed.test", "A", /^; fully validated\ndangling\.signed\.test\.\s+\d+\s+IN\s+CNAME\s+gone/m],
  ];
  for (const [name, type, want] of cases) {
    it(`delv validates ${name} ${type}`, async () => {
      const out = await delv(anchor, "signed.test.", srv.port, name, type);
      assert.match(out, want, out);
    });
  }

  it("NXDOMAIN carries the NSEC records of the chain that cover the name and the wildcard", async () => {
    const r = await dig(srv.port, "nope.signed.test", "A", "+dnssec", "+norec");
    assert.equal(r.status, "NXDOMAIN");
    const types = r.authority.map((l) => l.split(" ").slice(3, 5).join(" "));
    const nsecs = types.filter((t) => t.startsWith("NSEC ")).length;
    assert.ok(nsecs >= 1, r.text);
    assert.equal(types.filter((t) => t === "RRSIG NSEC").length, nsecs, r.text);
    assert.ok(
      r.authority.some((l) => l.includes(" RRSIG SOA ")),
      r.text,
    );
    // Through a CNAME: the NSEC records cover the chain's target, gone.signed.test.
    const d = await dig(srv.port, "dangling.signed.test", "A", "+dnssec", "+norec");
    assert.equal(d.status, "NXDOMAIN");
    assert.ok(
      d.answer.some((l) => l.includes(" RRSIG CNAME ")),
      d.text,
    );
    const covers = d.authority.filter((l) => l.split(" ")[3] === "NSEC").map((l) => l.split(" ")[0]);
    assert.ok(covers.includes("a.b.deep.signed.test."), d.text);
  });

  it("DO=0 and no EDNS get no DNSSEC records, before and after DO=1 asked the same", async () => {
    for (let i = 0; i < 2; i++) {
      const signed = await dig(srv.port, "www.signed.test", "A", "+dnssec");
      assert.ok(
        signed.answer.some((l) => l.includes(" RRSIG A ")),
        signed.text,
      );
      const plain = await dig(srv.port, "www.signed.test", "A");
      assert.ok(!plain.text.includes("RRSIG"), plain.text);
      const nx = await dig(srv.port, "nope.signed.test", "A", "+noedns");
      assert.equal(nx.status, "NXDOMAIN");
      assert.ok(!nx.text.includes("NSEC"), nx.text);
      const any = await dig(srv.port, "www.signed.test", "ANY");
      assert.ok(!/RRSIG|NSEC/.test(any.text), any.text);
    }
  });

  it("a reply with one signature octet flipped fails validation", async () => {
    const relay = await tamperingRelay(srv.port);
    try {
      const out = await delv(anchor, "signed.test.", relay.port, "txt.signed.test", "TXT");
      assert.doesNotMatch(out, /fully validated/, out);
      assert.match(out, /resolution failed|verify failure|no valid signature/i, out);
    } finally {
      relay.close();
    }
  });
});
