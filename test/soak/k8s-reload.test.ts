// The soak's reload at scale, reduced (10,000 Services under 1,000 QPS, the changed source's LIST held
// 8 s): an unchanged kubernetes block is reloaded without a LIST or a new watch, a changed one takes
// over only once synced, and no query is lost or answered SERVFAIL (`npm run soak -- k8s-reload`).

import { test } from "node:test";
import assert from "node:assert/strict";
import { k8sReload } from "./k8s-reload.ts";

test("soak k8s-reload, reduced: reloads at 10k Services list nothing when the source is unchanged, and no query fails", async () => {
  const report = await k8sReload.run({ reduced: true, log: () => undefined });
  assert.deepEqual(report.missed, []);
  assert.ok(report.figures.some((f) => f.name === "unchanged source: LIST requests"));
});
