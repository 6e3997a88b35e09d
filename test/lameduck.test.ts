// Graceful rollout end to end: SIGTERM under a steady query load. /ready turns 503 at once (so the
// Service stops sending new clients), queries keep being answered through `health { lameduck }`, and
// only then do the listeners close and the process exit cleanly.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { startLoad } from "./helpers/load.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { Type } from "../src/dns/constants.ts";

test("SIGTERM: /ready flips first, lameduck keeps answering, then a clean exit", async () => {
  const [healthPort, readyPort] = [await freePort(), await freePort()];
  const srv = await startServer(`example.org {
    health 127.0.0.1:${healthPort} {
        lameduck 2s
    }
    ready 127.0.0.1:${readyPort}
    hosts {
        192.0.2.1 a.example.org
        reload 0
    }
}
`);
  assert.equal((await httpGet(readyPort, "/ready")).status, 200);
  const load = startLoad(srv.port, "a.example.org.", Type.A, { intervalMs: 5, timeoutMs: 1000 });
  await sleep(200);

  const exited = new Promise<[number, number | null]>((r) =>
    srv.proc.once("exit", (code) => r([Date.now(), code])),
  );
  const termAt = Date.now();
  srv.proc.kill("SIGTERM");
  let ready = 200;
  for (let i = 0; i < 100 && ready === 200; i++) {
    ready = (await httpGet(readyPort, "/ready")).status;
    if (ready === 200) await sleep(10);
  }
  assert.equal(ready, 503, "/ready answers 503 once SIGTERM arrived");
  assert.equal((await httpGet(healthPort, "/health")).status, 200, "still alive during lameduck");

  // Well inside the 2 s lameduck: every query of the load was answered.
  await sleep(1200);
  const r = await load.stop();
  assert.deepEqual(r.failures, [], `${r.failures.length} of ${r.sent} failed`);
  assert.equal(r.answered, r.sent, "every query sent was answered");
  assert.ok(r.sent >= 50, `a real load (${r.sent} queries)`);

  const [exitAt, code] = await exited;
  assert.equal(code, 0, "a clean exit");
  assert.ok(exitAt - termAt >= 2000, "the listeners stayed open for the lameduck period");
  await srv.stop();
});
