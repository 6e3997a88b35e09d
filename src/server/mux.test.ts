import { test } from "node:test";
import assert from "node:assert/strict";
import { ZoneMux } from "./mux.ts";

test("the longest zone that contains the name wins", () => {
  const m = new ZoneMux<string>();
  m.add(".", "root");
  m.add("example.org.", "org");
  m.add("sub.example.org.", "sub");
  assert.deepEqual(m.match("a.sub.example.org."), { zone: "sub.example.org.", value: "sub" });
  assert.deepEqual(m.match("www.example.org."), { zone: "example.org.", value: "org" });
  assert.deepEqual(m.match("example.com."), { zone: ".", value: "root" });
  assert.deepEqual(m.match("."), { zone: ".", value: "root" });
});

test("no zone, no match; a label boundary is required", () => {
  const m = new ZoneMux<string>();
  m.add("example.org.", "org");
  assert.equal(m.match("badexample.org."), undefined);
  assert.equal(m.add("example.org.", "again"), false, "a zone is added once");
});

test("a label holding a dot is one label: a\\.example.org. is not below example.org.", () => {
  const m = new ZoneMux<string>();
  m.add("org.", "org");
  m.add("example.org.", "example");
  m.add("b\\.c.org.", "dotted");
  assert.deepEqual(m.match("a\\.example.org."), { zone: "org.", value: "org" });
  assert.deepEqual(m.match("x.a\\.example.org."), { zone: "org.", value: "org" });
  assert.deepEqual(m.match("x.example.org."), { zone: "example.org.", value: "example" });
  assert.deepEqual(m.match("x.b\\.c.org."), { zone: "b\\.c.org.", value: "dotted" });
  // A backslash octet before a separator: a\\ is one label, then example.
  assert.deepEqual(m.match("a\\\\.example.org."), { zone: "example.org.", value: "example" });
});
