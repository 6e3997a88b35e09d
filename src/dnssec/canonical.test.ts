import { test } from "node:test";
import assert from "node:assert/strict";
import { canonicalName, canonicalRRset, signedLabels, typeBitmap } from "./canonical.ts";
import { parseRRText } from "../dns/text.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

test("names: uncompressed wire form, lowercase, escapes decoded", () => {
  assert.equal(hex(canonicalName("Ab.example.")), "026162076578616d706c6500");
  assert.equal(hex(canonicalName("\\000.a.")), "0100016100");
});

test("an RRSIG's labels leave out the root and a leading wildcard (RFC 4034 3.1.3)", () => {
  assert.equal(signedLabels("www.example.com."), 3);
  assert.equal(signedLabels("*.example.com."), 2);
  assert.equal(signedLabels("."), 0);
});

test("an RRset in canonical form: sorted by rdata octets, duplicates once, the original TTL everywhere", () => {
  const rrs = [
    "a.example. 30 IN A 192.0.2.9",
    "a.example. 60 IN A 10.0.0.1",
    "a.example. 60 IN A 192.0.2.9",
  ].map((t) => parseRRText(t));
  const owner = "0161076578616d706c6500";
  const rr = (addr: string) => `${owner}00010001000000780004${addr}`;
  assert.equal(canonicalRRset(rrs, 120).toString("hex"), rr("0a000001") + rr("c0000209"));
  // Names inside rdata are lowercased and whole (RFC 4034 6.2).
  const mx = canonicalRRset([parseRRText("m.example. 60 IN MX 10 Mail.Example.")], 60);
  assert.ok(mx.toString("hex").endsWith("000a046d61696c076578616d706c6500"));
});

test("NSEC type bit maps (RFC 4034 4.1.2's example: A MX RRSIG NSEC TYPE1234)", () => {
  assert.equal(hex(typeBitmap([1, 15, 46, 47, 1234])), "0006400100000003" + "041b" + "00".repeat(26) + "20");
});
