// The apply queue with its clock and its scheduler in the test's hands: slices end at their budget
// and never inside a step, order is kept across items, `full` and whenRoom bound the bytes, a step
// that throws is dropped without stopping the rest, idle() waits for everything.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ApplyQueue, type Work } from "./apply-queue.ts";

/** A queue whose slices run when the test says so, on a clock each step advances by `stepMs`. */
function manual(o: { sliceMs?: number; maxBytes?: number; onBacklog?: (busy: boolean) => void } = {}) {
  let now = 0;
  const pending: (() => void)[] = [];
  const q = new ApplyQueue({ ...o, now: () => now, defer: (fn) => pending.push(fn) });
  return {
    q,
    advance: (ms: number) => (now += ms),
    /** Runs the next scheduled slice; false when none was scheduled. */
    slice(): boolean {
      const fn = pending.shift();
      fn?.();
      return fn !== undefined;
    },
  };
}

/** Work of `steps` units, each logging `name:i` and taking `ms` of the clock; `bytes` it holds (10). */
function units(
  log: string[],
  name: string,
  o: { steps: number; ms: number; bytes?: number },
  advance: (ms: number) => void,
): Work {
  const { steps: n, ms, bytes = 10 } = o;
  let i = 0;
  return {
    bytes,
    step() {
      log.push(`${name}:${i++}`);
      advance(ms);
      return i === n;
    },
  };
}

test("into an empty queue work starts at once; a slice ends once its budget is spent, between steps; the next one goes on in order", () => {
  const m = manual({ sliceMs: 1 });
  const log: string[] = [];
  m.q.push(units(log, "a", { steps: 5, ms: 0.4 }, m.advance));
  assert.deepEqual(log, ["a:0", "a:1", "a:2"], "the first slice runs inside push");
  m.q.push(units(log, "b", { steps: 2, ms: 0.4 }, m.advance));
  assert.equal(log.length, 3, "work behind other work waits for its slice");
  assert.ok(m.slice());
  assert.deepEqual(log.slice(3), ["a:3", "a:4", "b:0"]);
  assert.ok(m.slice());
  assert.deepEqual(log.slice(6), ["b:1"]);
  assert.equal(m.slice(), false, "nothing left, nothing scheduled");
  assert.equal(m.q.stats().queued, 0);
});

test("lone events pushed one after another in one turn of the loop: at once only until the turn's budget is spent", () => {
  const m = manual({ sliceMs: 1 });
  const log: string[] = [];
  // As a socket read of many small chunks gives them, each into a queue that the last one emptied.
  for (let i = 0; i < 10; i++) m.q.push(units(log, `e${i}`, { steps: 1, ms: 0.3 }, m.advance));
  assert.deepEqual(
    log,
    ["e0", "e1", "e2", "e3"].map((e) => `${e}:0`),
    "1 ms of them at once",
  );
  assert.ok(m.slice());
  assert.deepEqual(
    log.slice(4),
    ["e4", "e5", "e6", "e7"].map((e) => `${e}:0`),
  );
  assert.ok(m.slice());
  assert.equal(log.length, 10);
});

test("a step longer than the budget still runs whole, alone in its slice", () => {
  const m = manual({ sliceMs: 1 });
  const log: string[] = [];
  m.q.push(units(log, "big", { steps: 2, ms: 5 }, m.advance));
  assert.deepEqual(log, ["big:0"]);
  m.slice();
  assert.deepEqual(log, ["big:0", "big:1"]);
  assert.equal(m.q.stats().longestSliceMs, 5);
});

test("full past maxBytes; whenRoom calls back once half is left, not before", () => {
  const m = manual({ sliceMs: 1, maxBytes: 100 });
  const log: string[] = [];
  m.q.push(units(log, "first", { steps: 2, ms: 1, bytes: 30 }, m.advance));
  for (let i = 0; i < 3; i++) m.q.push(units(log, `w${i}`, { steps: 1, ms: 1, bytes: 30 }, m.advance));
  assert.equal(m.q.stats().bytes, 120);
  assert.equal(m.q.full, true);
  let room = 0;
  m.q.whenRoom(() => room++);
  m.slice();
  assert.equal(m.q.stats().bytes, 90);
  assert.equal(room, 0, "90 of 100 left: still over half");
  m.slice();
  m.slice();
  assert.equal(m.q.stats().bytes, 30);
  assert.equal(room, 1);
  assert.equal(m.q.full, false);
  m.q.whenRoom(() => room++);
  assert.equal(room, 2, "already room: at once");
  assert.equal(m.q.stats().fulls, 1);
});

test("a step that throws is dropped; the work behind it runs", () => {
  const m = manual({ sliceMs: 10 });
  const log: string[] = [];
  m.q.push({
    bytes: 1,
    step() {
      throw new Error("bad");
    },
  });
  m.q.push(units(log, "ok", { steps: 1, ms: 0 }, m.advance));
  m.slice();
  assert.deepEqual(log, ["ok:0"]);
  assert.equal(m.q.stats().bytes, 0);
});

test("idle() resolves once the queue is empty, with setImmediate between slices", async () => {
  const q = new ApplyQueue({ sliceMs: 0 });
  const log: string[] = [];
  let turns = 0;
  const tick = setInterval(() => turns++, 0);
  let i = 0;
  q.push({
    bytes: 1,
    step() {
      log.push(String(i++));
      return i === 20;
    },
  });
  await q.idle();
  clearInterval(tick);
  assert.deepEqual(
    log,
    Array.from({ length: 20 }, (_, n) => String(n)),
  );
  assert.equal(q.stats().slices, 20, "a budget of 0: one step a slice");
  assert.ok(turns > 0, "timers ran between slices");
});

test("a backlog is reported when a slice leaves work over, and its end once all is applied; a lone event is none", () => {
  const told: boolean[] = [];
  const m = manual({ sliceMs: 1, onBacklog: (busy) => told.push(busy) });
  const log: string[] = [];
  m.q.push(units(log, "lone", { steps: 1, ms: 0.1 }, m.advance));
  m.slice();
  assert.deepEqual(told, [], "a lone event applied at once");
  m.advance(5);
  m.q.push(units(log, "burst", { steps: 8, ms: 0.4 }, m.advance));
  assert.deepEqual(told, [true], "work left over after the first slice");
  m.q.push(units(log, "more", { steps: 2, ms: 0.4 }, m.advance));
  assert.ok(m.slice());
  assert.deepEqual(told, [true], "told once while it lasts");
  while (m.slice());
  assert.deepEqual(told, [true, false]);
  assert.equal(log.length, 11);
  m.q.stopped();
  assert.deepEqual(told, [true, false], "no backlog to end");
});

test("a source that stops during a backlog ends it", () => {
  const told: boolean[] = [];
  const m = manual({ sliceMs: 1, onBacklog: (busy) => told.push(busy) });
  m.q.push(units([], "burst", { steps: 8, ms: 0.4 }, m.advance));
  m.q.stopped();
  assert.deepEqual(told, [true, false]);
});

test("while restMs is set a backlog's next slice waits on a timer instead of the next turn; at 0 the turn again", async () => {
  let rest = 5;
  let deferred = 0;
  const q = new ApplyQueue({
    sliceMs: 0,
    restMs: () => rest,
    defer: (fn) => {
      deferred++;
      setImmediate(fn);
    },
  });
  let i = 0;
  const stamps: number[] = [];
  q.push({
    bytes: 1,
    step() {
      stamps.push(performance.now());
      if (++i === 5) rest = 0;
      return i === 10;
    },
  });
  await q.idle();
  assert.equal(i, 10);
  // Slices 2 to 5 came after a rest (a timer of 5 ms never fires early), the rest from the turn.
  for (let s = 1; s < 5; s++) assert.ok(stamps[s] - stamps[s - 1] >= 4, `slice ${s} rested`);
  assert.equal(deferred, 5, "once restMs was back to 0, the next turn");
});
