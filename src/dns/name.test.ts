import { test } from "node:test";
import assert from "node:assert/strict";
import {
  canonical,
  isSubdomain,
  join,
  labelCount,
  labels,
  labelsBelow,
  labelText,
  nameToWire,
  parent,
  wireKey,
  wireKeyInto,
} from "./name.ts";
import { encode } from "./encode.ts";
import { scanQuery } from "./scan.ts";
import { Type } from "./constants.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { rng } from "../../test/helpers/rng.ts";

test("labelText escapes '.', '\\' and octets outside 0x21-0x7e, nothing else", () => {
  assert.equal(labelText("www"), "www");
  assert.equal(labelText("a.b"), "a\\.b");
  assert.equal(labelText("a\\b"), "a\\\\b");
  assert.equal(labelText("\x00 \x7f\xff"), "\\000\\032\\127\\255");
  assert.equal(labelText('(x);"@$'), '(x);"@$');
});

test("splitting a name skips escaped dots and backslashes", () => {
  const cases: [string, string[]][] = [
    [".", []],
    ["a.b.", ["a", "b"]],
    ["a\\.b.c.", ["a\\.b", "c"]],
    ["a\\\\.b.", ["a\\\\", "b"]],
    ["a\\\\\\..b.", ["a\\\\\\.", "b"]], // a, backslash, dot: one label
    ["\\046.", ["\\046"]],
  ];
  for (const [name, want] of cases) {
    assert.deepEqual(labels(name), want, name);
    assert.equal(labelCount(name), want.length, name);
  }
  assert.equal(parent("a\\.b.c."), "c.");
  assert.equal(parent("a.b\\.c."), "b\\.c.");
  assert.equal(parent("a\\."), ".");
  assert.equal(parent("."), ".");
});

test("labelsBelow cuts a name's labels in front of its zone, as labels() and the zone's count do", () => {
  const random = rng(7);
  const pieces = ["a", "svc", "ns-1", "\\.", "\\\\", "x\\046y", "abcdefghijklmnop", "0"];
  const name = (n: number) => {
    let s = "";
    for (let i = 0; i < n; i++) s += pieces[Math.floor(random() * pieces.length)] + ".";
    return s === "" ? "." : s;
  };
  for (let i = 0; i < 2_000; i++) {
    const zone = name(Math.floor(random() * 3));
    const below = Math.floor(random() * 5);
    const full = zone === "." ? name(below) : name(below).slice(0, below === 0 ? 0 : undefined) + zone;
    const want = labels(full).slice(0, labels(full).length - labels(zone).length);
    assert.deepEqual(labelsBelow(full, zone), want, `${full} below ${zone}`);
  }
  assert.deepEqual(labelsBelow("a.b.cluster.local.", "cluster.local."), ["a", "b"]);
  assert.deepEqual(labelsBelow("a.b.", "."), ["a", "b"]);
  assert.deepEqual(labelsBelow("cluster.local.", "cluster.local."), []);
});

test("isSubdomain needs an unescaped separator before the zone", () => {
  assert.equal(isSubdomain("www.example.org.", "example.org."), true);
  assert.equal(isSubdomain("example.org.", "example.org."), true);
  assert.equal(isSubdomain("a\\.example.org.", "example.org."), false);
  assert.equal(isSubdomain("a\\\\.example.org.", "example.org."), true);
  assert.equal(isSubdomain("x.a\\.example.org.", "a\\.example.org."), true);
  assert.equal(isSubdomain("badexample.org.", "example.org."), false);
  assert.equal(isSubdomain("anything\\.", "."), true);
});

test("canonical: absolute, ASCII lowercase, escapes in one form", () => {
  const cases: [string, string][] = [
    ["Example.ORG", "example.org."],
    [".", "."],
    ["", "."],
    ["A\\046B", "a\\.b."],
    ["a\\.B.", "a\\.b."],
    ["\\065\\(x", "a(x."],
    ["a b", "a\\032b."],
    ["\\196.", "\\196."], // octet 0xC4 is no ASCII letter: kept
    ["a\\\\b.", "a\\\\b."],
  ];
  for (const [input, want] of cases) assert.equal(canonical(input), want, input);
});

test("join treats an escaped final dot as part of the label", () => {
  assert.equal(join("www", "example.org."), "www.example.org.");
  assert.equal(join("www.", "example.org."), "www.");
  assert.equal(join("a\\.", "example.org."), "a\\..example.org.");
  assert.equal(join("a\\\\.", "example.org."), "a\\\\.");
  assert.equal(join("@", "example.org."), "example.org.");
});

test("nameToWire decodes escapes and checks lengths", () => {
  assert.deepEqual([...(nameToWire("a\\.b.C.") as Uint8Array)], [3, 0x61, 0x2e, 0x62, 1, 0x43, 0]);
  assert.deepEqual([...(nameToWire(".") as Uint8Array)], [0]);
  assert.deepEqual([...(nameToWire("x") as Uint8Array)], [1, 0x78, 0], "relative taken as absolute");
  assert.match(nameToWire("a..b.") as string, /empty label/);
  assert.match(nameToWire("x".repeat(64)) as string, /longer than 63/);
  assert.match(nameToWire(Array(5).fill("y".repeat(60)).join(".")) as string, /longer than 255/);
  assert.match(nameToWire("a\\") as string, /bad escape/);
  assert.match(nameToWire("\u0101.") as string, /above U\+00FF/);
  // 255 octets exactly, with escapes standing for one octet each.
  const max = [63, 63, 63, 61].map((n) => "\\.".repeat(n)).join(".") + ".";
  assert.equal((nameToWire(max) as Uint8Array).length, 255);
});

test("wireKey is the name part of the scanner's answer-cache key, escapes decoded", () => {
  for (const name of ["www.example.org.", ".", "a\\.b.c.", "a\\\\.b.", "x\\032y.Z."]) {
    const q = encode(queryMsg(name, Type.A));
    const s = scanQuery(q);
    assert.ok(!("drop" in s));
    assert.equal(s.key.slice(0, -5), wireKey(name), name);
  }
  assert.notEqual(wireKey("a\\.b.c."), wireKey("a\\\\.b.c."));
});

test("wireKeyInto writes wireKey's octets, or says it cannot (-1) where wireKey must do it", () => {
  const octets = (s: string) => [...s].map((c) => c.charCodeAt(0));
  const out = new Uint8Array(256);
  const long = "x".repeat(63);
  for (const name of [
    ".",
    "a.",
    "www.Example.ORG.",
    "a..b.",
    "_http._tcp.web.default.svc.cluster.local.",
    `${long}.${long}.`,
    "\u00e9t\u00c9.example.",
  ]) {
    const n = wireKeyInto(name, out);
    assert.deepEqual([...out.subarray(0, n)], octets(wireKey(name)), name);
  }
  // An escape, a label of 64, a character above U+00FF, no root dot, more than `out` holds.
  for (const name of ["a\\.b.", `${long}x.a.`, `a.${long}x.`, "\u0101.", "a.b", ""])
    assert.equal(wireKeyInto(name, out), -1, name);
  assert.equal(wireKeyInto("ab.", new Uint8Array(4)), 4);
  assert.equal(wireKeyInto("abc.", new Uint8Array(4)), -1);
});
