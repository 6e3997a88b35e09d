// The soak's fuzz part at its reduced size (3,000 packets per run): the same checks as
// `npm run soak -- fuzz` on a million.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fuzz } from "./fuzz.ts";

test("soak fuzz, reduced: UDP on each engine and TCP; every valid query answered, no reply over the limit", async () => {
  const report = await fuzz.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  const sent = report.figures.filter((f) => f.name.endsWith(": packets sent")).map((f) => Number(f.value));
  assert.ok(sent.length >= 2 && sent.every((n) => n === 3000), `packets sent per run: ${sent.join(", ")}`);
});
