// The soak's node-local-restart part at its reduced size (one replacement and the removal at 500
// queries a second instead of five and the removal at 2,000): the same checks as
// `npm run soak -- node-local-restart`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { nodeLocalRestart } from "./node-local-restart.ts";

test("soak node-local-restart, reduced: a node's clusterdns replaced and removed under load loses no query", async () => {
  const report = await nodeLocalRestart.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
});
