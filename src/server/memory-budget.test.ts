import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { MemoryBudget, cgroupLimit } from "./memory-budget.ts";
import { memoryStats } from "../metrics/server-stats.ts";

const MiB = 1048576;

test("the cgroup's limit: v2's memory.max, v1's limit_in_bytes, and no limit", () => {
  const files = (m: Record<string, string>) => (path: string) => {
    if (m[path] === undefined) throw new Error("ENOENT");
    return m[path];
  };
  assert.equal(cgroupLimit(files({ "/sys/fs/cgroup/memory.max": "268435456\n" })), 256 * MiB);
  assert.equal(cgroupLimit(files({ "/sys/fs/cgroup/memory.max": "max\n" })), undefined);
  assert.equal(
    cgroupLimit(files({ "/sys/fs/cgroup/memory/memory.limit_in_bytes": "209715200\n" })),
    200 * MiB,
  );
  assert.equal(
    cgroupLimit(files({ "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712" })),
    undefined,
  );
  assert.equal(cgroupLimit(files({})), undefined);
});

test("over the budget it drops the caches every check and says so once; under 90% it stops", () => {
  const lines: string[] = [];
  const log = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });
  let rss = 100 * MiB;
  let drops = 0;
  const b = new MemoryBudget();
  b.start(150 * MiB, log, () => rss);
  const off = b.onShed(() => drops++);
  b.check();
  assert.deepEqual([b.shedding, drops], [false, 0]);
  rss = 160 * MiB;
  b.check();
  b.check();
  assert.deepEqual([b.shedding, drops, memoryStats.shedding], [true, 2, 1]);
  rss = 140 * MiB; // under the budget, over 90% of it: still shedding, nothing dropped
  b.check();
  assert.deepEqual([b.shedding, drops], [true, 2]);
  rss = 130 * MiB;
  b.check();
  assert.deepEqual([b.shedding, memoryStats.shedding], [false, 0]);
  assert.deepEqual(lines, [
    "memory over budget: dropping cached answers and refusing large replies",
    "memory back under budget",
  ]);
  off();
  rss = 200 * MiB;
  b.check();
  assert.equal(drops, 2, "removed");
  b.stop();
});
