import { test } from "node:test";
import assert from "node:assert/strict";
import { RelayIn, RelayOut, type RelayMessage } from "./relay.ts";

/** A worker's side behind a target: what it reads, per key, in order. */
function worker() {
  const inbox = new RelayIn();
  const read: string[] = [];
  return { inbox, read, target: { postMessage: (m: unknown) => inbox.deliver(m as RelayMessage) } };
}

const turn = () => new Promise((r) => setImmediate(r));

test("what one turn posts crosses as one message per key run, in order", async () => {
  const out = new RelayOut();
  const posted: RelayMessage[] = [];
  out.join({ postMessage: (m) => posted.push(m as RelayMessage) });
  out.post("a", 1);
  out.post("a", 2);
  out.post("b", 3);
  out.post("a", 4);
  assert.equal(posted.length, 0, "nothing is sent before the turn ends");
  await turn();
  assert.deepEqual(
    posted.map((m) => [m.key, m.ms]),
    [
      ["a", [1, 2]],
      ["b", [3]],
      ["a", [4]],
    ],
  );
});

test("a reader that subscribes late gets what was held, then the rest; an ended key's hold is dropped", async () => {
  const out = new RelayOut();
  const w = worker();
  out.join(w.target);
  out.post("k", "one");
  out.post("gone", "x");
  await turn();
  out.withdraw("gone");
  w.inbox.subscribe("k", (m) => w.read.push(String(m)));
  out.post("k", "two");
  await turn();
  assert.deepEqual(w.read, ["one", "two"]);
  w.inbox.subscribe("gone", (m) => w.read.push(String(m)));
  assert.deepEqual(w.read, ["one", "two"], "nothing held for a key that ended");
});

test("a worker that joins gets the state first, and what was pending only once, inside it", async () => {
  const out = new RelayOut();
  const first = worker();
  out.join(first.target);
  first.inbox.subscribe("k", (m) => first.read.push(String(m)));
  let state = ["s0"];
  out.provide("k", () => state);
  out.post("k", "e1");
  // The state already holds e1 (the store applied it when it was posted).
  state = ["s0+e1"];
  const late = worker();
  late.inbox.subscribe("k", (m) => late.read.push(String(m)));
  out.join(late.target);
  out.post("k", "e2");
  await turn();
  assert.deepEqual(first.read, ["e1", "e2"]);
  assert.deepEqual(late.read, ["s0+e1", "e2"]);
});
