// The soak's rolling restart at its reduced size (1,000 Services under 1,000 QPS, startup_timeout 1s;
// one swap with every LIST held 1.5 s, one with the API stalled 4 s): the same checks as `npm run soak
// -- rolling-restart`, latency reported, not checked.

import { test } from "node:test";
import assert from "node:assert/strict";
import { rollingRestart } from "./rolling-restart.ts";

test("soak rolling-restart, reduced: a new -reuseport process listens once synced, and no query is lost", async () => {
  const report = await rollingRestart.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  assert.ok(report.figures.some((f) => f.name.startsWith("swap 1: the new process synced")));
  assert.ok(report.figures.some((f) => f.name.startsWith("swap 2 (API stalled): waited beside")));
});
