import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { IndexReader, SharedIndex } from "./shared-index.ts";
import type { Codec } from "./table.ts";
import { H } from "./arena.ts";
import { rng } from "../../test/helpers/rng.ts";

const text: Codec<string> = { write: (w, v) => w.str(v), read: (r) => r.str() };

test("a shared table behaves as a Map under random changes, read by its writer and by a reader", () => {
  const index = new SharedIndex({ initial: 4096 });
  const t = index.table("t", text);
  const reader = new IndexReader(index.handle, 0).table("t", text);
  const model = new Map<string, string>();
  const next = rng(34);
  // Keys of every kind a store has: short, long, Latin-1 and wider than Latin-1.
  const keyOf = (i: number) => ["k", "ns/name-", "é", "名前/"][i % 4] + String(i).repeat(1 + (i % 5));
  for (let step = 0; step < 20_000; step++) {
    const key = keyOf(Math.floor(next() * 3000));
    index.write(() => {
      // The writer reads its own change at once, inside the section (its remembered value is gone).
      assert.equal(t.get(key), model.get(key));
      if (next() < 0.3) assert.equal(t.delete(key), model.delete(key));
      else {
        const v = "v".repeat(Math.floor(next() * 300)) + step;
        t.set(key, v);
        model.set(key, v);
      }
      assert.equal(t.get(key), model.get(key));
    });
    if (step % 997 === 0) {
      for (const table of [t, reader]) {
        assert.equal(table.size, model.size);
        assert.deepEqual(new Map(table.entries()), model);
      }
    }
  }
  for (const [k, v] of model) assert.equal(reader.get(k), v);
  assert.equal(reader.get("absent"), undefined);
  assert.equal(reader.has(keyOf(1)), model.has(keyOf(1)));
  assert.throws(() => reader.set("k", "v"), /written by its writer thread only/);
});

test("blocks are reused once no reader reads, and not while one does", () => {
  const index = new SharedIndex({ initial: 4096 });
  const t = index.table("t", text);
  const reader = new IndexReader(index.handle, 3);
  const churn = () => {
    for (let i = 0; i < 2000; i++) index.write(() => t.set(`k${i % 50}`, "x".repeat(i % 200)));
  };
  churn();
  const settled = index.used.top;
  churn();
  assert.equal(index.used.top, settled, "with no reader, churn reuses the freed blocks");
  // The writer changes the index inside the read, so the read runs again: the check is the first's.
  let first = true;
  reader.read(() => {
    if (!first) return;
    first = false;
    churn();
    assert.ok(index.used.top > settled, "a reader inside a read section keeps what it may reach");
  });
  // The first section after it left may still take a block: the freed ones return at its end.
  churn();
  const held = index.used.top;
  churn();
  churn();
  assert.equal(index.used.top, held, "once it left, the blocks are reused again");
});

test("a reader slot left by a thread that died does not hold memory forever", () => {
  const index = new SharedIndex({ initial: 4096 });
  const t = index.table("t", text);
  const reader = new IndexReader(index.handle, 5);
  const churn = () => {
    for (let i = 0; i < 500; i++) index.write(() => t.set("k", "x".repeat(i % 300)));
  };
  let first = true;
  reader.read(() => {
    if (!first) return;
    first = false;
    churn();
    index.clearReader(5);
    churn();
    const top = index.used.top;
    churn();
    churn();
    assert.equal(index.used.top, top);
  });
});

test("a reader opens only the tables the writer made, with a clear error otherwise", () => {
  const index = new SharedIndex();
  index.table("services", text);
  assert.throws(() => index.table("services", text), /table services made twice/);
  const reader = new IndexReader(index.handle, 0);
  assert.throws(() => reader.table("pods", text), /no table pods/);
  assert.throws(() => new IndexReader(index.handle, 1024), /reader slot 1024/);
});

/** Runs reader threads against a writer that changes both tables in one section each time. */
async function race(o: { readers: number; ms: number; unguarded: boolean }) {
  const index = new SharedIndex({ initial: 4096 });
  const a = index.table("a", text);
  const b = index.table("b", text);
  let gen = 0;
  const writeOne = () =>
    index.write(() => {
      gen++;
      const g = `g${gen};`;
      a.set("g", g);
      b.set("filler", g.repeat(1 + (gen % 97)));
      // Keys that keep coming: the tables are rebuilt and the buffer grows while the readers read.
      a.set(`k${gen % 20_000}`, g.repeat(1 + (gen % 13)));
      b.set("g", g);
    });
  writeOne();
  const url = new URL("../../test/helpers/index-race-reader.ts", import.meta.url);
  const workers = Array.from(
    { length: o.readers },
    (_, slot) =>
      new Worker(url, { workerData: { handle: index.handle, slot, ms: o.ms, unguarded: o.unguarded } }),
  );
  const results = workers.map(
    (w) =>
      new Promise<{ reads: number; torn: number; malformed: number; retried: number; givenUp: number }>(
        (resolve, reject) => {
          w.once("message", resolve);
          w.once("error", reject);
        },
      ),
  );
  // The writer runs in bursts between turns of the event loop, so the readers' messages get through.
  let done = false;
  void Promise.all(results).then(() => (done = true));
  const deadline = Date.now() + o.ms + 10_000;
  while (!done && Date.now() < deadline) {
    for (let i = 0; i < 200; i++) writeOne();
    await new Promise((r) => setImmediate(r));
  }
  const out = await Promise.all(results);
  return { gen, out };
}

test("a read whose views the buffer outgrew keeps nothing it read: the retry reads the grown buffer", () => {
  // A reader read a table while the writer grew the buffer and closed its section: the reader's
  // views stopped short of the new entry, so it was not found, and that miss was remembered under
  // the section's sequence number, which the read's retry then met again and took as clean.
  const index = new SharedIndex({ initial: 4096 });
  const t = index.table("t", text);
  t.set("k", "old");
  const reader = new IndexReader(index.handle, 0);
  const rt = reader.table("t", text);
  const bytesBefore = index.handle.sab.byteLength;
  const big = "new".repeat(bytesBefore);
  let attempts = 0;
  const got = reader.read(() => {
    if (attempts++ === 0) {
      // The same key, so the slot array stays where the reader's views reach: only the entry lies
      // past them.
      index.write(() => t.set("k", big));
    }
    return rt.get("k");
  });
  assert.ok(index.handle.sab.byteLength > bytesBefore, "the buffer grew under the read");
  assert.equal(attempts, 2);
  const again = reader.read(() => rt.get("k"));
  assert.ok(got === big, `read ${got?.length} characters of ${big.length}`);
  assert.ok(again === big, `read again ${again?.length} characters of ${big.length}`);
});

test("readers racing a writer never see the two tables disagree, nor a reused block", async () => {
  const { gen, out } = await race({ readers: 2, ms: 600, unguarded: false });
  assert.ok(gen > 1000, `the writer wrote ${gen} sections`);
  for (const r of out) {
    assert.ok(r.reads > 100, `a reader read ${r.reads} times`);
    assert.equal(r.malformed, 0);
    assert.equal(r.givenUp, 0, "a reader that asked the writer to pause got a clean read");
    assert.equal(r.torn, 0);
  }
});

test("the race is real: reads without a read section do see the tables disagree", async () => {
  // The control for the test above: the same race, with each get on its own. Bounded: up to 4 runs.
  let torn = 0;
  for (let run = 0; run < 4 && torn === 0; run++) {
    const { out } = await race({ readers: 1, ms: 400, unguarded: true });
    torn += out[0].torn;
    assert.equal(out[0].malformed, 0, "each get on its own still reads whole entries");
  }
  assert.ok(torn > 0);
});

test("a write section opens at its first change: reads before it hold no reader, and one that changes nothing moves nothing", () => {
  const index = new SharedIndex({ initial: 4096 });
  const t = index.table("t", text);
  t.set("k", "v1");
  const reader = new IndexReader(index.handle, 0);
  const rt = reader.table("t", text);
  const seq = () => Atomics.load(new Int32Array(index.handle.sab), H.SEQ);
  const before = seq();
  let after: string | undefined;
  index.write(() => {
    // What a watch event does first: read and compare, no change yet. A reader (here in the same
    // thread, so it could not wait for the writer) reads at once, cleanly.
    assert.equal(t.get("k"), "v1");
    assert.equal(
      reader.read(() => rt.get("k")),
      "v1",
    );
    assert.equal(reader.retried + reader.givenUp, 0, "the read did not wait for the section");
    assert.equal(seq(), before, "no section is open before the first change");
    t.set("k", "v2");
    assert.equal(seq() & 1, 1, "open once a table changed");
    index.afterWrite(() => (after = reader.read(() => rt.get("k"))));
    assert.equal(after, undefined, "afterWrite waits for the section to close");
  });
  assert.equal(after, "v2", "run once it closed, where a reader sees the change whole");
  assert.equal(seq(), before + 2);
  const closed = seq();
  index.write(() => t.get("k"));
  assert.equal(seq(), closed, "a section that changed nothing moved nothing");
});
