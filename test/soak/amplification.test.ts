// The soak's amplification part at its reduced size (every question and client size on both engines,
// as in the full run; a flood of 2,000 queries instead of 50,000): the same checks as
// `npm run soak -- amplification`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { amplification } from "./amplification.ts";

test("soak amplification, reduced: no reply over the client's size; rrl drops, slips and spares", async () => {
  const report = await amplification.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
});
