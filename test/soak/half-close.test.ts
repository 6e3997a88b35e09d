// The soak's half-close part at its reduced size (40 connections): the same checks as
// `npm run soak -- half-close`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { halfClose } from "./half-close.ts";

test("soak half-close, reduced: clients that FIN after their queries get every reply, forwarded ones too", async () => {
  const report = await halfClose.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
});
