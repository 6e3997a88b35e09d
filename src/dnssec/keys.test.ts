// Key files as BIND's dnssec-keygen and ldns's ldns-keygen write them, read and used to sign; the
// signatures checked with the public key of the .key file (validators check the same; test/dnssec.test.ts
// has delv and Unbound do it on the wire).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyFileError, keyTag, parseDnskeyFile, readKeyPair, verifies } from "./keys.ts";

const dir = mkdtempSync(join(tmpdir(), "clusterdns-keys-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function bindKey(alg: string, zone = "example.test", ...flags: string[]): string {
  return join(
    dir,
    execFileSync("dnssec-keygen", ["-q", "-K", dir, "-a", alg, ...flags, zone], { encoding: "utf8" }).trim(),
  );
}

function ldnsKey(alg: string, zone = "example.test", ...flags: string[]): string {
  const base = execFileSync("ldns-keygen", ["-a", alg, ...flags, zone], {
    cwd: dir,
    encoding: "utf8",
  }).trim();
  return join(dir, base);
}

const cases: [string, () => string, number][] = [
  ["dnssec-keygen ECDSAP256SHA256", () => bindKey("ECDSAP256SHA256"), 13],
  ["dnssec-keygen ECDSAP384SHA384", () => bindKey("ECDSAP384SHA384"), 14],
  ["dnssec-keygen ED25519", () => bindKey("ED25519"), 15],
  ["dnssec-keygen RSASHA256 KSK", () => bindKey("RSASHA256", "example.test", "-b", "2048", "-f", "KSK"), 8],
  ["ldns-keygen ECDSAP256SHA256", () => ldnsKey("ECDSAP256SHA256"), 13],
  ["ldns-keygen ED25519 KSK", () => ldnsKey("ED25519", "example.test", "-k"), 15],
];

for (const [what, make, alg] of cases) {
  test(`${what}: read, its tag is the file name's, and what it signs verifies`, () => {
    const base = make();
    for (const path of [base, `${base}.key`, `${base}.private`]) {
      const k = readKeyPair(path);
      assert.equal(k.algorithm, alg);
      assert.equal(k.owner, "example.test.");
      assert.equal(k.tag, Number(/\+(\d+)$/.exec(base)![1]));
      assert.equal(k.flags & 1, what.endsWith("KSK") ? 1 : 0);
      const data = Buffer.from("some RRset");
      const sig = k.sign(data);
      assert.ok(verifies(alg, Buffer.from(k.rdata.subarray(4)), data, sig));
      assert.ok(!verifies(alg, Buffer.from(k.rdata.subarray(4)), Buffer.from("another"), sig));
    }
  });
}

test("RFC 4034 Appendix B's key tag, on a DNSKEY whose tag BIND printed", () => {
  // dnssec-keygen named this key's files +013+...: the same number from the rdata alone.
  const base = bindKey("ECDSAP256SHA256", "tag.test");
  const k = readKeyPair(base);
  assert.equal(keyTag(k.rdata), Number(/\+(\d+)$/.exec(base)![1]));
});

test("bad key files: one error naming the file and why", () => {
  const base = bindKey("ECDSAP256SHA256", "bad.test");
  const other = bindKey("ECDSAP256SHA256", "bad.test");
  // A .private of another key beside this .key (Node 24.22 and later refuse such a pair's JWK with
  // a message that names neither file), for each kind of key.
  const pairs: [string, string, string][] = [
    [base, other, "Kmixed.test.+013+00001"],
    [bindKey("ED25519", "bad.test"), bindKey("ED25519", "bad.test"), "Kmixed.test.+015+00001"],
    [
      bindKey("RSASHA256", "bad.test", "-b", "1024"),
      bindKey("RSASHA256", "bad.test", "-b", "1024"),
      "Kmixed.test.+008+00001",
    ],
  ];
  for (const [one, another, name] of pairs) {
    const mixed = join(dir, name);
    copyFileSync(`${one}.key`, `${mixed}.key`);
    copyFileSync(`${another}.private`, `${mixed}.private`);
    assert.throws(
      () => readKeyPair(mixed),
      (e: Error) =>
        e instanceof KeyFileError &&
        e.message === `${mixed}.private: the private key does not match ${mixed}.key`,
      name,
    );
  }
  assert.throws(
    () => readKeyPair(join(dir, "Kmissing")),
    (e: Error) => /Kmissing\.key: ENOENT/.test(e.message),
  );
  const noKey = join(dir, "Knokey.test.+013+00002");
  writeFileSync(`${noKey}.key`, "; nothing\n");
  copyFileSync(`${base}.private`, `${noKey}.private`);
  assert.throws(() => readKeyPair(noKey), /no DNSKEY record/);
  assert.throws(() => parseDnskeyFile("x. IN DNSKEY 1 3 13 AAAA", "f"), /zone key bit/);
  const dsa = join(dir, "Kdsa.test.+003+00003");
  writeFileSync(`${dsa}.key`, "dsa.test. IN DNSKEY 256 3 3 AAAA\n");
  writeFileSync(`${dsa}.private`, "Private-key-format: v1.3\nAlgorithm: 3 (DSA)\n");
  assert.throws(() => readKeyPair(dsa), /algorithm 3 is not supported/);
});
