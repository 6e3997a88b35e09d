import { test } from "node:test";
import assert from "node:assert/strict";
import { dnssecRdataFromText, dnssecRdataToText } from "./text.ts";
import { DNSKEY, NSEC, RRSIG } from "./rrsig.ts";
import { typeBitmap } from "./canonical.ts";

const raw = (type: number, fields: string) =>
  Buffer.from((dnssecRdataFromText(type, fields.split(" "), "example.org.") as { raw: Uint8Array }).raw);

test("NSEC, DNSKEY and RRSIG presentation forms become their wire rdata (RFC 4034)", () => {
  const nsec = raw(NSEC, "b A MX RRSIG NSEC TYPE1234");
  assert.deepEqual(
    nsec,
    Buffer.concat([Buffer.from("\x01b\x07example\x03org\x00", "latin1"), typeBitmap([1, 15, 46, 47, 1234])]),
  );
  assert.deepEqual(raw(DNSKEY, "257 3 15 AAEC Aw=="), Buffer.from([1, 1, 3, 15, 0, 1, 2, 3]));
  const sig = raw(RRSIG, "A 13 3 300 20260101000000 1700000000 12345 example.org. AAEC Aw==");
  assert.equal(sig.readUInt16BE(0), 1);
  assert.deepEqual([sig[2], sig[3], sig.readUInt32BE(4)], [13, 3, 300]);
  assert.equal(sig.readUInt32BE(8), Date.UTC(2026, 0, 1) / 1000);
  assert.equal(sig.readUInt32BE(12), 1_700_000_000);
  assert.equal(sig.readUInt16BE(16), 12345);
  assert.deepEqual(sig.subarray(-4), Buffer.from([0, 1, 2, 3]));
});

test("bad DNSSEC rdata is an error that says what is wrong", () => {
  assert.throws(() => raw(NSEC, "b A NOTATYPE"), /unknown type 'NOTATYPE'/);
  assert.throws(() => raw(DNSKEY, "257 3 15"), /DNSKEY takes flags/);
  assert.throws(() => raw(DNSKEY, "257 3 15 !!!"), /invalid base64/);
  assert.throws(() => raw(RRSIG, "A 13 3 300 2026 1700000000 12345 example.org."), /RRSIG takes 8 fields/);
  assert.throws(
    () => raw(RRSIG, "A 13 3 300 soon 1700000000 12345 example.org. AAEC"),
    /signature time 'soon'/,
  );
  assert.throws(() => raw(RRSIG, "A 13 300 300 1 1 12345 example.org. AAEC"), /invalid labels '300'/);
});

test("the presentation form written is the one read", () => {
  for (const [type, text] of [
    [NSEC, "b.example.org. A MX RRSIG NSEC TYPE1234"],
    [DNSKEY, "257 3 15 AAECAw=="],
    [RRSIG, "A 13 3 300 20260101000000 20231114221320 12345 example.org. AAECAw=="],
    [NSEC, "\\000.example.org. RRSIG NSEC"],
  ] as const) {
    assert.equal(dnssecRdataToText(type, raw(type, text)), text);
  }
});
