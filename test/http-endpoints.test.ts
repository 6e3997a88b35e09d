// The health, ready and metrics listeners against clients that misbehave: as CoreDNS's (5 s read,
// write and idle timeouts), a connection that sends no complete request is let go within seconds,
// so idle sockets cannot pile up in the pod's memory while DNS keeps answering.

import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { startServer } from "./helpers/server.ts";
import { freePort } from "./helpers/free-port.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";

/** Milliseconds until the server closes a connection that sent `text` and nothing more (cap: `max`). */
function heldFor(port: number, text: string, max: number): Promise<number> {
  return new Promise((resolve) => {
    const start = Date.now();
    const s = connect(port, "127.0.0.1", () => s.write(text));
    const timer = setTimeout(() => s.destroy(), max);
    s.on("error", () => {});
    s.resume();
    s.on("close", () => {
      clearTimeout(timer);
      resolve(Date.now() - start);
    });
  });
}

test("a silent or half-sent request is closed within CoreDNS's 5 s read timeout, not a minute", async () => {
  const [health, ready, metrics] = [await freePort(), await freePort(), await freePort()];
  const srv = await startServer(`example.org {
    health 127.0.0.1:${health}
    ready 127.0.0.1:${ready}
    prometheus 127.0.0.1:${metrics}
    whoami
}
`);
  try {
    const held = await Promise.all([
      heldFor(health, "", 15_000),
      heldFor(ready, "GET /ready HTTP/1.1\r\nHost: x\r\n", 15_000),
      heldFor(metrics, "GET /metrics HTTP/1.1\r\n", 15_000),
    ]);
    for (const ms of held) assert.ok(ms < 8000, `held ${held.join(", ")} ms`);
    assert.equal((await dig(srv.port, "a.example.org")).status, "NOERROR");
  } finally {
    await srv.stop();
  }
});

test("connections past 1,000 are closed at once; DNS answers meanwhile and /health after", async () => {
  const health = await freePort();
  const srv = await startServer(`example.org {
    health 127.0.0.1:${health}
    whoami
}
`);
  try {
    const held = await Promise.all(Array.from({ length: 1100 }, () => heldFor(health, "", 15_000)));
    const atOnce = held.filter((ms) => ms < 2000).length;
    assert.ok(atOnce >= 100, `${atOnce} of 1100 closed at once`);
    assert.ok(Math.max(...held) < 8000, "the others within the read timeout");
    assert.equal((await dig(srv.port, "a.example.org")).status, "NOERROR");
    assert.equal((await httpGet(health, "/health")).status, 200);
  } finally {
    await srv.stop();
  }
});
