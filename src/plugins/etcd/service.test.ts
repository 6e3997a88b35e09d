import { test } from "node:test";
import assert from "node:assert/strict";
import type { Service } from "./service.ts";
import { grouped, hostKind, keyOf, matchesWildcard, nameOf, parseService, stripTarget } from "./service.ts";
import { prefixEnd } from "./client.ts";

test("names and keys map both ways, a wildcard label cutting the key short", () => {
  assert.deepEqual(keyOf("x.skydns.local.", "skydns"), { key: "/skydns/local/skydns/x", star: false });
  assert.deepEqual(keyOf("a.*.skydns.local.", "skydns", true), { key: "/skydns/local/skydns", star: true });
  assert.deepEqual(keyOf("any.skydns.local.", "skydns", true), { key: "/skydns/local/skydns", star: true });
  assert.equal(nameOf("/skydns/local/skydns/x"), "x.skydns.local.");
  assert.equal(nameOf("/skydns/local/skydns/"), "skydns.local.");
  assert.ok(matchesWildcard("/skydns/local/skydns/w/a", "/skydns/local/skydns/*/a"));
  assert.ok(!matchesWildcard("/skydns/local/skydns/w/b", "/skydns/local/skydns/*/a"));
});

test("values decode as Go's JSON decoder takes them", () => {
  const s = parseService("/k", '{"Host":"10.0.0.1","PORT":80,"extra":1,"text":null,"mail":true}');
  assert.equal(s.host, "10.0.0.1");
  assert.equal(s.port, 80);
  assert.equal(s.mail, true);
  assert.throws(() => parseService("/k", '{"ttl":"60"}'), /\/k: field 'ttl'/);
  assert.throws(() => parseService("/k", '{"ttl":-1}'), /ETCD|ttl/);
  assert.throws(() => parseService("/k", '{"port":1.5}'), /port/);
  assert.throws(() => parseService("/k", "[1]"), /not a JSON object/);
  assert.throws(() => parseService("/k", "{"), /\/k:/);
});

test("the host's kind: an address, a name (CNAME) or, with text, TXT", () => {
  const s = (host: string, text = ""): Service => ({ ...parseService("/k", "{}"), host, text });
  assert.deepEqual(hostKind(s("10.0.0.1")), { kind: "A", address: "10.0.0.1" });
  assert.deepEqual(hostKind(s("::ffff:10.0.0.1")), { kind: "A", address: "10.0.0.1" });
  assert.equal(hostKind(s("2001:db8::1")).kind, "AAAA");
  assert.equal(hostKind(s("web.example.")).kind, "CNAME");
  assert.equal(hostKind(s("", "hi")).kind, "TXT");
});

test("groups: the nearest records decide; a disagreement among them keeps everything", () => {
  const svc = (key: string, group: string): Service => ({ ...parseService(key, "{}"), group });
  const a = svc("/skydns/x/a", "g1");
  const b = svc("/skydns/x/y/b", "g2");
  const c = svc("/skydns/x/y/c", "");
  assert.deepEqual(grouped([a, b, c]), [a, c]);
  const d = svc("/skydns/x/d", "g2");
  assert.deepEqual(grouped([a, d, c]), [a, d, c]);
  assert.deepEqual(grouped([c, b]), [c, b]);
});

test("targetstrip drops leading labels, all of them never", () => {
  assert.equal(stripTarget("a.b.example.", 1), "b.example.");
  assert.equal(stripTarget("a.b.example.", 3), "a.b.example.");
  assert.equal(stripTarget("a.b.example.", 0), "a.b.example.");
});

test("a prefix's range end is its last byte below 0xff plus one", () => {
  assert.deepEqual(prefixEnd("/a/"), Buffer.from("/a0"));
  assert.deepEqual(prefixEnd(Buffer.from([0x61, 0xff])), Buffer.from("b"));
  assert.deepEqual(prefixEnd(Buffer.from([0xff])), Buffer.from([0]));
});
