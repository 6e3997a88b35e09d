import { test } from "node:test";
import assert from "node:assert/strict";
import { OneOrMany } from "./one-or-many.ts";

test("one-or-many: says when a key comes and goes, keeps each value once", () => {
  const m = new OneOrMany<number>();
  assert.equal(m.add(1, "a"), true);
  assert.equal(m.add(1, "a"), false);
  assert.equal(m.add(1, "b"), false);
  assert.equal(m.add(1, "c"), false);
  assert.deepEqual(m.get(1), ["a", "b", "c"]);
  assert.equal(m.delete(1, "x"), false);
  assert.equal(m.delete(1, "b"), false);
  assert.equal(m.delete(1, "a"), false);
  assert.deepEqual(m.get(1), ["c"]);
  assert.equal(m.delete(1, "a"), false, "a value it does not hold leaves the key alone");
  assert.equal(m.delete(1, "c"), true);
  assert.deepEqual(m.get(1), []);
  assert.equal(m.size, 0);
  assert.equal(m.delete(2, "a"), false);
});

test("one-or-many: counts an array only for keys with several values", () => {
  const m = new OneOrMany<string>();
  m.add("k", "a");
  assert.equal(
    m.bytes(() => 10),
    50,
  );
  m.add("k", "b");
  assert.equal(
    m.bytes(() => 10),
    50 + 32,
  );
});
