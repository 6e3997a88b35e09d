// The soak's churn-memory part at its reduced size (1,000 Services, 20 s of churn at 50 operations/s,
// RSS sampled every 2 s): RSS back within 10% of its baseline; the trend reported, not checked.

import { test } from "node:test";
import assert from "node:assert/strict";
import { churnMemory } from "./churn-memory.ts";

test("soak churn-memory, reduced: RSS after Service churn back within 10% of its baseline", async () => {
  const report = await churnMemory.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  assert.ok(report.figures.some((f) => f.name === "RSS at the end over the baseline"));
});
