// The soak's watch-storm part at its reduced size (500 Services, 3 bursts of 2,000 EndpointSlice
// events at 500 QPS), with one thread and with -workers 2: no query lost or failed, the change
// written after the storm answers, the store equals the API afterwards, and with workers the main
// thread stepped aside from UDP while it applied the storm. Its latencies are reported, not checked
// (a shared machine).

import { test } from "node:test";
import assert from "node:assert/strict";
import { watchStorm } from "./watch-storm.ts";

test("soak watch-storm, reduced: answers throughout, every event applied, the store equal to the API", async () => {
  const report = await watchStorm.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  const names = report.figures.map((f) => f.name);
  assert.ok(names.some((n) => n.includes("store equal to the API")));
  assert.ok(names.some((n) => n.includes("storm p99 over idle p99")));
  assert.equal(names.filter((n) => n.includes("store equal to the API")).length, 2, "both runs");
  assert.ok(names.some((n) => n.includes("stepped aside")));
});
