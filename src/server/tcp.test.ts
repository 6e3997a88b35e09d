import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { pino } from "pino";
import { Pipeline } from "./pipeline.ts";
import { TcpListener, defaultTcpOptions } from "./tcp.ts";

const log = pino({ level: "silent" });

/** Connects with the client's own side kept open (allowHalfOpen) and reports how the connection ended:
 * "dropped" when the server let go of it whole (a write after its FIN fails), "half-open" when the
 * server only sent its FIN and still holds the connection after `waitMs`. */
function holdOpen(port: number, waitMs: number): Promise<"dropped" | "half-open" | "open"> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    let fin = false;
    s.on("error", () => undefined);
    s.on("close", () => resolve("dropped"));
    s.on("end", () => {
      fin = true;
      // A connection the server dropped answers these with a reset: the second write fails.
      setTimeout(() => s.write(Buffer.from([0, 12])), 50);
      setTimeout(() => s.write(Buffer.alloc(12)), 150);
    });
    setTimeout(() => {
      s.removeAllListeners("close");
      s.destroy();
      resolve(fin ? "half-open" : "open");
    }, waitMs);
  });
}

test("an idle connection is dropped whole at the idle timeout, even if the client keeps its side open", async () => {
  const tcp = new TcpListener(
    new Pipeline("dns://:0", log),
    { ...defaultTcpOptions, idleTimeoutMs: 200 },
    log,
  );
  const port = await tcp.listen("127.0.0.1", 0);
  try {
    assert.equal(await holdOpen(port, 1500), "dropped");
  } finally {
    await tcp.close();
  }
});

test("close() lets go of idle connections whole and returns, even if a client keeps its side open", async () => {
  const tcp = new TcpListener(new Pipeline("dns://:0", log), defaultTcpOptions, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const client = holdOpen(port, 1500);
  await new Promise((r) => setTimeout(r, 100));
  await tcp.close();
  assert.equal(await client, "dropped");
});
