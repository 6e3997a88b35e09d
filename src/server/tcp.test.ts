import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { Pipeline } from "./pipeline.ts";
import { TcpListener, defaultTcpOptions } from "./tcp.ts";
import { halfOpenExchange } from "../../test/helpers/half-open.ts";

const log = pino({ level: "silent" });

test("an idle connection is dropped whole at the idle timeout, even if the client keeps its side open", async () => {
  const tcp = new TcpListener(
    new Pipeline("dns://:0", log),
    { ...defaultTcpOptions, idleTimeoutMs: 200 },
    log,
  );
  const port = await tcp.listen("127.0.0.1", 0);
  try {
    assert.equal((await halfOpenExchange(port, { waitMs: 1500 })).end, "dropped");
  } finally {
    await tcp.close();
  }
});

test("close() lets go of idle connections whole and returns, even if a client keeps its side open", async () => {
  const tcp = new TcpListener(new Pipeline("dns://:0", log), defaultTcpOptions, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const client = halfOpenExchange(port, { waitMs: 1500 });
  await new Promise((r) => setTimeout(r, 100));
  await tcp.close();
  assert.equal((await client).end, "dropped");
});
