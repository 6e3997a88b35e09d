// The soak's forward-spoof part at its reduced size (one round: two floods of 65,536 forged replies):
// the same checks as `npm run soak -- forward-spoof`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { forwardSpoof } from "./forward-spoof.ts";

test("soak forward-spoof, reduced: forged replies for every ID at a forwarded query's port are never taken", async () => {
  const report = await forwardSpoof.run({ reduced: true, log: (line) => console.log(line) });
  assert.deepEqual(report.missed, []);
});
