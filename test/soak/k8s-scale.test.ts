// The reduced run of the scale soak (k8s-scale.ts, over bench/scale.ts): a small cluster with a
// headless service of 5,000 endpoints, read through the API and from an `objects` file. Both get
// ready, and the big service's A answer is a partial one with TC, as many records as fit: 512 octets
// without EDNS, 1232 with it, and over TCP the 65,535 of a DNS message, which 5,000 addresses overrun.

import { test } from "node:test";
import assert from "node:assert/strict";
import { scaleRows } from "../../bench/scale.ts";

/** An A record of the big service: a pointer to the owner (2), type, class, TTL, length (10), address. */
const A_RECORD = 16;

test("a headless service of 5,000 endpoints: as many records as fit, with TC, through the API and from a file", async () => {
  const rows = await scaleRows([200], ["api", "objects"], 5000, () => {});
  assert.deepEqual(
    rows.map((r) => r.source),
    ["API", "objects"],
  );
  for (const r of rows) {
    assert.ok(Number(r.readyS) > 0 && r.rss > 0, `${r.source}: ready, with its RSS measured`);
    assert.equal(r.endpoints > 5000, true);
    assert.deepEqual(
      r.big.map((b) => b.limit),
      [512, 1232, 65535],
    );
    for (const b of r.big) {
      const what = `${r.source}, ${b.transport}`;
      assert.equal(b.tc, true, `${what}: TC set, the answer is partial`);
      assert.ok(b.octets <= b.limit, `${what}: ${b.octets} octets fit ${b.limit}`);
      assert.ok(b.octets + A_RECORD > b.limit, `${what}: ${b.octets} octets, room for no more record`);
      assert.ok(b.records > 0 && b.records < 5000, `${what}: ${b.records} records`);
    }
  }
});
