// dnssec on a zone that delegates: the referrals of a zone file signed on the fly, checked by Unbound
// validating from the zone's key and following the referrals itself. Everything runs in a network
// namespace of its own, where name servers listen on port 53 (the port a resolver asks glue at):
// clusterdns serves example.test on 127.0.0.1 and its signed child secure.example.test on 127.0.0.3;
// Knot serves the unsigned child child.example.test on 127.0.0.2. The insecure delegation's referral
// must prove that no DS exists (an NSEC at the cut, NS in its bit map and DS not, RFC 4035 3.1.4.1),
// so the child's answers come out insecure rather than bogus; the secure one carries its signed DS.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { digIn, type DigResult } from "./helpers/dig.ts";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { startUnboundValidator, type UnboundValidator } from "./upstream/unbound-validator.ts";
import { dnskeyLine, keygen } from "./helpers/dnssec-tools.ts";

const parentZone = (ds: string) =>
  zoneText(
    "example.test",
    "www 60 IN A 192.0.2.1",
    "child 120 IN NS ns.child",
    "ns.child 60 IN A 127.0.0.2",
    "secure 120 IN NS ns.secure",
    "ns.secure 60 IN A 127.0.0.3",
    ds,
  );

const corefile = (parentKey: string, childKey: string) => `example.test:53 {
    bind 127.0.0.1
    dnssec {
        key file ${parentKey}
    }
    file db.example.test
}
secure.example.test:53 {
    bind 127.0.0.3
    dnssec {
        key file ${childKey}
    }
    file db.secure.example.test
}
`;

describe("dnssec: referrals of a signed zone, followed by a validating Unbound", () => {
  let dir: string;
  let ns: Netns;
  let srv: RunningServer;
  let knot: Knot;
  let unbound: UnboundValidator;
  const ask = (port: number, name: string, type: string, ...opts: string[]): Promise<DigResult> =>
    digIn(ns.name, "127.0.0.1", port, name, type, ...opts);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-dnssec-cut-"));
    const parentKey = keygen(dir, "example.test", "ECDSAP256SHA256");
    const childKey = keygen(dir, "secure.example.test", "ED25519");
    const ds = execFileSync("dnssec-dsfromkey", ["-2", `${childKey}.key`], { encoding: "utf8" }).trim();
    ns = await createNetns(undefined, "nameserver 127.0.0.1\n");
    srv = await startServer(corefile(parentKey, childKey), {
      netns: ns.name,
      args: ["-dns.port", "53"],
      files: {
        "db.example.test": parentZone(ds.replace(/^\S+/, "secure.example.test.")),
        "db.secure.example.test": zoneText("secure.example.test", "www 60 IN A 192.0.2.3"),
      },
    });
    knot = await startKnot({
      netns: ns.name,
      address: "127.0.0.2",
      port: 53,
      zone: { origin: "child.example.test.", text: zoneText("child.example.test", "www 60 IN A 192.0.2.2") },
    });
    unbound = await startUnboundValidator({ "example.test.": dnskeyLine(parentKey) }, 53, ns.name);
  });

  after(async () => {
    await unbound?.stop();
    await knot?.stop();
    await srv?.stop();
    await ns?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A section's records as "owner TYPE rdata", without TTL and class. */
  const records = (lines: string[]) => lines.map((l) => l.split(" ").toSpliced(1, 2).join(" "));

  it("an insecure delegation's referral carries the NSEC of the cut (NS, no DS) and its RRSIG", async () => {
    const r = await ask(53, "www.child.example.test", "A", "+dnssec", "+norec");
    assert.equal(r.status, "NOERROR", r.text);
    assert.ok(!r.flags.includes("aa"), r.text);
    const authority = records(r.authority);
    assert.ok(authority.includes("child.example.test. NS ns.child.example.test."), r.text);
    assert.ok(authority.includes("child.example.test. NSEC \\000.child.example.test. NS RRSIG NSEC"), r.text);
    const sigs = r.authority.filter((l) => l.split(" ")[3] === "RRSIG").map((l) => l.split(" ")[4]);
    // The NSEC is signed; the NS records and the glue are the child's and are not.
    assert.deepEqual(sigs, ["NSEC"], r.text);
    assert.ok(!r.additional.some((l) => l.includes(" RRSIG ")), r.text);
    // The NSEC's TTL is the NS RRset's (120), as CoreDNS gives it.
    assert.ok(
      r.authority.some((l) => /^child\.example\.test\. 120 IN NSEC /.test(l)),
      r.text,
    );
  });

  it("a secure delegation's referral carries the DS and its RRSIG, and no NSEC", async () => {
    const r = await ask(53, "www.secure.example.test", "A", "+dnssec", "+norec");
    assert.equal(r.status, "NOERROR", r.text);
    const types = r.authority.map((l) => l.split(" ").slice(3, 5).join(" "));
    assert.ok(
      types.some((t) => t.startsWith("DS ")),
      r.text,
    );
    assert.ok(types.includes("RRSIG DS"), r.text);
    assert.ok(!types.some((t) => t.startsWith("NSEC ") || t === "RRSIG NSEC"), r.text);
    assert.ok(!types.includes("RRSIG NS"), r.text);
    // Without DO: the referral as before, no DNSSEC records.
    const plain = await ask(53, "www.secure.example.test", "A", "+norec");
    assert.ok(!/\sIN\s+(DS|RRSIG|NSEC)\s/.test(plain.text), plain.text);
  });

  it("a DS question at the insecure cut is denied by an NSEC that shows the cut's NS", async () => {
    const r = await ask(53, "child.example.test", "DS", "+dnssec", "+norec");
    assert.equal(r.status, "NOERROR", r.text);
    assert.ok(r.flags.includes("aa"), r.text);
    assert.ok(
      records(r.authority).includes("child.example.test. NSEC \\000.child.example.test. NS RRSIG NSEC"),
      r.text,
    );
  });

  it("Unbound resolves under the insecure delegation as insecure (no AD), under the secure one with AD", async () => {
    const insecure = await ask(unbound.port, "www.child.example.test", "A", "+dnssec");
    assert.equal(insecure.status, "NOERROR", `${insecure.text}\n${unbound.log()}`);
    assert.ok(
      insecure.answer.some((l) => l.endsWith(" A 192.0.2.2")),
      `${insecure.text}\n${unbound.log()}`,
    );
    assert.ok(!insecure.flags.includes("ad"), insecure.text);
    const secure = await ask(unbound.port, "www.secure.example.test", "A", "+dnssec");
    assert.equal(secure.status, "NOERROR", `${secure.text}\n${unbound.log()}`);
    assert.ok(secure.flags.includes("ad"), `${secure.text}\n${unbound.log()}`);
    // The parent's own answers validate too (the zone's key is the trust anchor).
    const parent = await ask(unbound.port, "www.example.test", "A", "+dnssec");
    assert.ok(parent.flags.includes("ad"), `${parent.text}\n${unbound.log()}`);
  });
});
