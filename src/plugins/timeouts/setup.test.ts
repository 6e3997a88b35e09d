import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { parseCorefile } from "../../corefile/parser.ts";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";

function directive(body: string): Directive {
  const [block] = parseCorefile(`. {\n${body}\n}\n`, "Corefile");
  return block.directives[0];
}

test("timeouts: read, write and idle in ms on the block; the unset ones stay unset", async () => {
  const { ctx } = fakeContext();
  await setup(directive("timeouts {\n read 5s\n idle 1m30s\n}"), ctx);
  assert.deepEqual(ctx.block.timeouts, { readMs: 5000, idleMs: 90_000 });
  await setup(directive("timeouts {\n write 2s\n}"), ctx);
  assert.deepEqual(ctx.block.timeouts, { readMs: 5000, idleMs: 90_000, writeMs: 2000 });
});

test("timeouts: bad stanzas stop start-up at their line", async () => {
  await assertConfigErrors(setup, [
    [directive("timeouts"), /Corefile:2 .*timeouts: give at least one of read, write, idle/],
    [directive("timeouts 5s"), /Corefile:2 .*timeouts: 'timeouts' takes 0 argument/],
    [directive("timeouts {\n read\n}"), /Corefile:3 .*'read' takes 1 argument/],
    [directive("timeouts {\n read 500ms\n}"), /Corefile:3 .*read 500ms is not between 1s and 24h/],
    [directive("timeouts {\n idle 25h\n}"), /Corefile:3 .*idle 25h is not between 1s and 24h/],
    [directive("timeouts {\n write soon\n}"), /Corefile:3 .*invalid duration 'soon'/],
    [directive("timeouts {\n linger 5s\n}"), /Corefile:3 .*unknown property 'linger'/],
  ]);
});

/** Resolves with how the connection ended within `ms`: "closed" by the server, or still "open". */
function silentConnection(port: number, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => undefined);
    s.on("close", () => resolve("closed"));
    setTimeout(() => {
      s.removeAllListeners("close");
      s.destroy();
      resolve("open");
    }, ms);
  });
}

test("timeouts reach the TCP listener: longer and shorter than the default read limit of 3 s", async () => {
  const srv = await startServer(". {\n    timeouts {\n        read 20s\n    }\n    whoami\n}\n");
  try {
    assert.equal(await silentConnection(srv.port, 5000), "open", "held past the default 3 s");
  } finally {
    assert.equal(await srv.stop(), 0);
  }
  const short = await startServer(". {\n    timeouts {\n        read 1s\n    }\n    whoami\n}\n");
  try {
    assert.equal(await silentConnection(short.port, 10_000), "closed");
  } finally {
    assert.equal(await short.stop(), 0);
  }
});
