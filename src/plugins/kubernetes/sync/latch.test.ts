import { test } from "node:test";
import assert from "node:assert/strict";
import { Latch } from "./latch.ts";

test("latch: waiters before and after open all resolve, once open it stays open", async () => {
  const l = new Latch();
  const order: string[] = [];
  const seen = (what: string) => order.push(what);
  const early = l.wait().then(() => seen("early"));
  assert.equal(l.isOpen, false);
  await Promise.resolve();
  assert.deepEqual(order, []);
  l.open();
  l.open();
  assert.equal(l.isOpen, true);
  await early;
  await l.wait().then(() => seen("late"));
  assert.deepEqual(order, ["early", "late"]);
});
