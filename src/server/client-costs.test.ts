import { test } from "node:test";
import assert from "node:assert/strict";
import { ClientCosts, REFUSE } from "./client-costs.ts";
import { clientCostStats } from "../metrics/server-stats.ts";

/** A 4,000-record reply (64 KB) as the chain handed it over: about 4 ms of a client's share. */
const BIG = 64_000;

test("a client past its share waits; another client does not", () => {
  const c = new ClientCosts({ shareUs: 100_000, always: true });
  let now = 1000;
  // 100 ms of credit: 24 big replies (4.05 ms each) spend it, the 25th query waits.
  for (let i = 0; i < 25; i++) {
    assert.equal(c.admit("10.0.0.1", now), 0, `query ${i}`);
    c.chargeChain("10.0.0.1", BIG, now);
  }
  const wait = c.admit("10.0.0.1", now);
  assert.ok(wait > 0 && wait <= 100, `waits ${wait} ms`);
  assert.equal(c.admit("10.0.0.2", now), 0);
  // Its credit comes back at its share: after the wait it goes on.
  now += wait;
  assert.equal(c.admit("10.0.0.1", now), 0);
});

test("a wait past the bound, or past the deferred queries' bound, is refused", () => {
  const c = new ClientCosts({ shareUs: 100_000, maxWaitMs: 50, maxDeferred: 1, always: true });
  const refused = clientCostStats.refused;
  for (let i = 0; i < 25; i++) c.chargeChain("10.0.0.1", BIG, 0);
  assert.ok(c.admit("10.0.0.1", 0) > 0);
  c.deferred = 1;
  assert.equal(c.admit("10.0.0.1", 0), REFUSE);
  c.deferred = 0;
  for (let i = 0; i < 10; i++) c.chargeChain("10.0.0.1", BIG, 0);
  assert.equal(c.admit("10.0.0.1", 0), REFUSE);
  assert.equal(clientCostStats.refused, refused + 2);
});

test("replays of large stored replies count; a share of 0 limits nothing", () => {
  const c = new ClientCosts({ shareUs: 10_000, always: true });
  for (let i = 0; i < 20; i++) c.chargeReplay("10.0.0.1", BIG, 0);
  assert.ok(c.admit("10.0.0.1", 0) > 0);
  const off = new ClientCosts({ shareUs: 0, always: true });
  for (let i = 0; i < 100; i++) off.chargeChain("10.0.0.1", BIG, 0);
  assert.equal(off.admit("10.0.0.1", 0), 0);
});

test("a small table: a bucket whose client went quiet is taken by a new one, full", () => {
  const c = new ClientCosts({ shareUs: 100_000, slots: 1, always: true });
  for (let i = 0; i < 30; i++) c.chargeChain("10.0.0.1", BIG, 0);
  // Sharing the one bucket while it is in debt: the other address waits too (the table is too small).
  assert.ok(c.admit("10.0.0.2", 0) > 0);
  // Once it has refilled, a new address starts with a full bucket.
  assert.equal(c.admit("10.0.0.3", 5000), 0);
  assert.equal(c.credit("10.0.0.3", 5000), 100_000);
});

test("an idle server limits no one: a client past its share goes on while the loop is not busy", () => {
  const c = new ClientCosts({ shareUs: 10_000 });
  for (let i = 0; i < 50; i++) c.chargeChain("10.0.0.1", BIG, 0);
  assert.ok(c.credit("10.0.0.1", 0) < 0, "charged all the same");
  assert.equal(c.admit("10.0.0.1", 0), 0);
});
