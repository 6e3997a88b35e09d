// The soak's costly-client part at its reduced size (10 names of each size, 6 s of 80 QPS of
// 4,000-record names beside 200 QPS of cluster names): the same checks as
// `npm run soak -- costly-client`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { costlyClient } from "./costly-client.ts";

test("soak costly-client, reduced: a client of huge forwarded answers starves no one", async () => {
  const report = await costlyClient.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
});
