import { test } from "node:test";
import assert from "node:assert/strict";
import { AnswerCache } from "./answer-cache.ts";

const entry = (generation: number, expires: number, tag = 1) => ({
  bytes: Buffer.from([tag]),
  generation,
  expires,
  rcode: 0,
  rflags: "qr,aa",
  owner: undefined,
});

test("a stored answer is found until it expires", () => {
  const c = new AnswerCache();
  c.set("k", entry(c.generation, 1000));
  assert.equal(c.get("k", 999)?.bytes[0], 1);
  assert.equal(c.get("k", 1000), undefined);
  assert.equal(c.size, 0, "an expired entry is dropped when seen");
  assert.deepEqual([c.hits, c.misses], [1, 1]);
});

test("invalidate drops everything, and an answer computed before it is not stored", () => {
  const c = new AnswerCache();
  const before = c.generation;
  c.set("a", entry(before, 10_000));
  c.invalidate();
  assert.equal(c.get("a", 0), undefined);
  c.set("b", entry(before, 10_000));
  assert.equal(c.get("b", 0), undefined, "stale generation refused");
  c.set("b", entry(c.generation, 10_000));
  assert.ok(c.get("b", 0));
});

test("at capacity the oldest entry makes room", () => {
  const c = new AnswerCache(2);
  c.set("1", entry(0, 10_000, 1));
  c.set("2", entry(0, 10_000, 2));
  c.set("3", entry(0, 10_000, 3));
  assert.equal(c.size, 2);
  assert.equal(c.get("1", 0), undefined);
  assert.equal(c.get("3", 0)?.bytes[0], 3);
});
