import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { heapGrowthPercent, limitHeapGrowth } from "./heap.ts";
import { watchBacklog } from "./watch-backlog.ts";

// A worker thread compacts its heap once it is set up (src/worker.ts): the collector must be reachable
// there, where no command-line flag exposes it, and give the emptied pages back.
test("collectGarbage compacts a worker thread's heap and gives its pages back", async () => {
  const heap = new URL("./heap.ts", import.meta.url).href;
  const body = `
    const { parentPort } = require("node:worker_threads");
    const v8 = require("node:v8");
    import(${JSON.stringify(heap)}).then(({ collectGarbage, gcStats }) => {
      // Old-space pages left mostly empty: 1 object in 20 kept, scattered among the garbage.
      const kept = [];
      for (let i = 0; i < 400000; i++) {
        const o = { i, s: "x" + i };
        if (i % 20 === 0) kept.push(o);
      }
      const before = v8.getHeapStatistics().total_heap_size;
      collectGarbage();
      const after = v8.getHeapStatistics().total_heap_size;
      parentPort.postMessage({ before, after, compactions: gcStats.compactions, kept: kept.length });
    });`;
  const w = new Worker(body, { eval: true });
  const r = await new Promise<{ before: number; after: number; compactions: number }>((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
  await w.terminate();
  assert.equal(r.compactions, 1);
  assert.ok(r.after < r.before, `heap ${r.before} -> ${r.after} octets`);
});

test("the old space may grow further while watch events are backlogged, and back after; not while listing", () => {
  limitHeapGrowth("serving");
  assert.equal(heapGrowthPercent(), 30);
  watchBacklog.report(true);
  watchBacklog.report(true);
  assert.equal(heapGrowthPercent(), 100);
  watchBacklog.report(false);
  assert.equal(heapGrowthPercent(), 100, "another source still has a backlog");
  watchBacklog.report(false);
  assert.equal(heapGrowthPercent(), 30);
  limitHeapGrowth("list");
  watchBacklog.report(true);
  assert.equal(heapGrowthPercent(), 20, "a first LIST's pages go through the queue too");
  watchBacklog.report(false);
  limitHeapGrowth("serving");
});
