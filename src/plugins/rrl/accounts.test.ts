import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { AccountTable } from "./accounts.ts";

/** Two threads charge `keys` of `table` `charges` times each, starting together; what each charge
 * returned, both threads' together. */
async function race(
  table: AccountTable,
  o: { charges: number; keys: number[]; costMs: number; windowMs: number },
) {
  const url = new URL("../../../test/helpers/rrl-charger.ts", import.meta.url);
  const go = new SharedArrayBuffer(8);
  const flag = new Int32Array(go);
  const workers = [0, 1].map(() => new Worker(url, { workerData: { ...o, buffer: table.buffer, go } }));
  const done = workers.map(
    (w) =>
      new Promise<Int32Array>((resolve, reject) => {
        w.once("message", resolve);
        w.once("error", reject);
      }),
  );
  const end = Date.now() + 10_000;
  while (Atomics.load(flag, 1) < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  Atomics.store(flag, 0, 1);
  try {
    const [x, y] = await Promise.all(done);
    const all = new Int32Array(x.length + y.length);
    all.set(x);
    all.set(y, x.length);
    return all;
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Charges per thread in the races: enough that the two threads overlap for many of them (the
 * race's control, the slot locks taken out, loses charges at this count). */
const N = 500_000;

test("two threads charging one account at once: every charge counted once, the allowance given once", async () => {
  const table = AccountTable.create(1000);
  // 1 ms a response: 1000 within the allowance (one second's worth), at one moment; no debt cap.
  const results = await race(table, { charges: N, keys: [12345], costMs: 1, windowMs: 1e9 });
  assert.equal(table.held, 1, "one account, though both threads inserted it at once");
  assert.equal(results.filter((r) => r === 0).length, 1000);
  const limited = results.filter((r) => r > 0).sort();
  assert.equal(limited.length, 2 * N - 1000);
  assert.equal(
    limited.findIndex((r, i) => r !== i + 1),
    -1,
    "the over-limit counts are 1, 2, 3... each once",
  );
  // The account's time moved by every charge: 1000 within it, the rest over it, the next one after.
  assert.equal(table.charge(12345, 7, 1, 1e9, 0), 2 * N - 1000 + 1);
  assert.ok(table.charge(12345, 7, 1, 1e9, 2 * N - 999) > 0, "a charge pays even when over");
  assert.equal(table.charge(12345, 7, 1, 1e9, 2 * N - 997), 0, "paid back");
});

test("two threads racing over more accounts than slots: the table stays full, never over, never stuck", async () => {
  const table = AccountTable.create(16);
  const keys = Array.from({ length: 64 }, (_, i) => i * 7919);
  const results = await race(table, { charges: N, keys, costMs: 1, windowMs: 1e9 });
  assert.equal(results.length, 2 * N);
  assert.equal(table.held, 16);
});

test("a full table: a new account takes the slot of its run's account with the most credit", () => {
  const table = AccountTable.create(16);
  // Accounts homed at slots 0..15 (hash a modulo 16), each 2 s in debt, each charged later than the last.
  for (let a = 0; a < 16; a++) for (let i = 0; i < 3; i++) table.charge(a, 1, 1000, 60_000, a * 10);
  assert.equal(table.held, 16);
  assert.ok(table.charge(1, 1, 1000, 60_000, 200) > 0, "in debt");
  // Home slot 0, run 0..7: account 0 is the one charged first, with the most credit: it goes.
  assert.equal(table.charge(16, 3, 1000, 60_000, 200), 0, "a fresh account");
  assert.equal(table.held, 16);
  // Account 0 comes back fresh (in place of account 16, the fresh one); the others of the run stay.
  assert.equal(table.charge(0, 1, 1000, 60_000, 200), 0, "evicted: fresh again");
  for (let a = 1; a < 8; a++) assert.ok(table.charge(a, 1, 1000, 60_000, 200) > 0, `account ${a} kept`);
  assert.equal(table.held, 16);
});

test("GCRA as BIND's balance: one second's credit at most, debt down to the window", () => {
  const table = AccountTable.create(4);
  // 10 a second (100 ms each), window 2 s.
  const charge = (now: number, b = 9) => table.charge(9, b, 100, 2000, now);
  for (let i = 0; i < 10; i++) assert.equal(charge(0), 0);
  assert.ok(charge(0) > 0, "the 11th at once is over");
  // Floods: the debt stops at 2 s worth, so 2 s of quiet pays it back (and not 1.9 s).
  for (let i = 0; i < 1000; i++) {
    charge(1000, 11);
    charge(1000, 13);
  }
  assert.ok(charge(2900, 11) > 0);
  assert.equal(charge(3100, 13), 0);
  // Long quiet: no more than one second's credit.
  let within = 0;
  for (let i = 0; i < 30; i++) if (charge(100_000) === 0) within++;
  assert.equal(within, 10);
});
