// The soak's TCP flood at its reduced size (4 clients pipelining 10,000 queries each, never reading;
// `timeouts { write 1s }`): the same checks as `npm run soak -- tcp-flood`, latency reported, not
// checked.

import { test } from "node:test";
import assert from "node:assert/strict";
import { tcpFlood } from "./tcp-flood.ts";

test("soak tcp-flood, reduced: clients that never read stop being read and are closed; UDP and new TCP answered", async () => {
  const report = await tcpFlood.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  assert.ok(report.figures.some((f) => f.name.startsWith("queries of the flood")));
});
