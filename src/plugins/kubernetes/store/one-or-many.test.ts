import { test } from "node:test";
import assert from "node:assert/strict";
import { LoneStringTable, OneOrMany } from "./one-or-many.ts";
import { copyingTables } from "../../../offheap/copying-tables.ts";
import { keysCodec } from "./codecs.ts";

test("one-or-many: says when a key comes and goes, keeps each value once, in the order added", () => {
  const tables = [
    new Map<string, readonly string[]>(),
    new LoneStringTable(),
    copyingTables().table("k", keysCodec),
  ];
  for (const table of tables) {
    const m = new OneOrMany(table);
    assert.equal(m.add("1", "a"), true);
    assert.equal(m.add("1", "a"), false);
    assert.equal(m.add("1", "b"), false);
    const held = m.get("1");
    assert.equal(m.add("1", "c"), false);
    assert.deepEqual(held, ["a", "b"], "a list read back is not changed by a later add");
    assert.deepEqual(m.get("1"), ["a", "b", "c"]);
    assert.equal(m.delete("1", "x"), false);
    assert.equal(m.delete("1", "b"), false);
    assert.equal(m.delete("1", "a"), false);
    assert.deepEqual(m.get("1"), ["c"]);
    assert.equal(m.delete("1", "a"), false, "a value it does not hold leaves the key alone");
    assert.equal(m.delete("1", "c"), true);
    assert.deepEqual(m.get("1"), []);
    assert.equal(m.size, 0);
    assert.equal(m.delete("2", "a"), false);
  }
});

test("one-or-many: a lone-string table gives back lists equal to those stored, not the same ones", () => {
  const t = new LoneStringTable();
  const list = ["a", "b"];
  t.set("k", list);
  list.push("c");
  assert.deepEqual(t.get("k"), ["a", "b"]);
  t.set("one", ["x"]);
  assert.deepEqual(
    [...t.entries()],
    [
      ["k", ["a", "b"]],
      ["one", ["x"]],
    ],
  );
  assert.equal(t.size, 2);
  assert.equal(t.delete("one"), true);
  assert.equal(t.has("one"), false);
});
