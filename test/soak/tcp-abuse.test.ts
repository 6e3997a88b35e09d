// The soak's TCP abuse part at its reduced size (300 idle connections, 30 slowloris, 30 partial
// 64 KiB messages, 2 clients pipelining without reading): the same checks as `npm run soak -- tcp-abuse`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { tcpAbuse } from "./tcp-abuse.ts";

test("soak tcp-abuse, reduced: connections capped and timed out; UDP and TCP answered throughout", async () => {
  const report = await tcpAbuse.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  assert.ok(report.figures.some((f) => f.name.startsWith("idle connections (300)")));
});
