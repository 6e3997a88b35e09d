// The soak's control-plane part at its reduced size (every bad input at start-up and on reload, 200
// mutated Corefiles and 400 mutated zone and objects files): the same checks as
// `npm run soak -- control-plane` on 5,000 of each.

import { test } from "node:test";
import assert from "node:assert/strict";
import { controlPlane } from "./control-plane.ts";

test("soak control-plane, reduced: one clear line for every bad input; reloads rejected under load", async () => {
  const report = await controlPlane.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
});
