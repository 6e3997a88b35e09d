import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { Directive } from "../../corefile/types.ts";
import type { SetupContext } from "../../plugin.ts";
import { setup } from "./setup.ts";
import { boundPort, parseListenAddress } from "./http-listener.ts";

function dir(name: string, args: string[] = [], block?: Directive[], line = 1): Directive {
  return {
    name,
    args: args.map((text) => ({ text, file: "Corefile", line, quoted: false })),
    block,
    file: "Corefile",
    line,
  };
}

/** One instance: every block's context shares its hooks and state. */
function fakeInstance() {
  const startup: (() => void | Promise<void>)[] = [];
  const shutdown: (() => void | Promise<void>)[] = [];
  const instance = { stopping: false, lameduckMs: 0, readyChecks: new Map() };
  const ctx = (): SetupContext => ({
    zones: ["."],
    root: "/",
    log: () => {
      throw new Error("health does not log");
    },
    onStartup: (fn) => void startup.push(fn),
    onShutdown: (fn) => void shutdown.push(fn),
    invalidate: () => {},
    onQueryDone: () => {},
    registerReady: () => {},
    block: { bind: [] },
    instance,
  });
  return {
    ctx,
    instance,
    start: async () => {
      for (const f of startup) await f();
    },
    stop: async () => {
      for (const f of [...shutdown].reverse()) await f();
    },
  };
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

const ADDR = "127.0.0.1:0";

test("GET /health answers 200 OK; other paths 404; the listener closes at shutdown", async () => {
  const inst = fakeInstance();
  assert.equal(await setup(dir("health", [ADDR]), inst.ctx()), undefined);
  assert.equal(boundPort(ADDR), undefined, "nothing listens before start-up");
  await inst.start();
  const port = boundPort(ADDR);
  assert.ok(port);
  assert.deepEqual(await get(port, "/health"), { status: 200, body: "OK" });
  assert.deepEqual(await get(port, "/health?verbose=1"), { status: 200, body: "OK" });
  assert.equal((await get(port, "/ready")).status, 404);
  assert.equal((await get(port, "/")).status, 404);
  await inst.stop();
  assert.equal(boundPort(ADDR), undefined);
  await assert.rejects(get(port, "/health"));
});

test("blocks naming the same address share one listener until the last lets go", async () => {
  const a = fakeInstance();
  const b = fakeInstance();
  await setup(dir("health", [ADDR]), a.ctx());
  await setup(dir("health", [ADDR]), b.ctx());
  await a.start();
  const port = boundPort(ADDR)!;
  await b.start();
  assert.equal(boundPort(ADDR), port, "the second block reuses the first listener");
  await a.stop();
  assert.equal((await get(port, "/health")).status, 200);
  await b.stop();
  assert.equal(boundPort(ADDR), undefined);
});

test("lameduck sets the instance's delay (the longest wins)", async () => {
  const inst = fakeInstance();
  await setup(dir("health", [], [dir("lameduck", ["5s"])]), inst.ctx());
  await setup(dir("health", [":8081"], [dir("lameduck", ["2s"])]), inst.ctx());
  assert.equal(inst.instance.lameduckMs, 5000);
});

test("an address in use fails start-up, naming the address and file:line", async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  t.after(() => blocker.close());
  const taken = `127.0.0.1:${(blocker.address() as { port: number }).port}`;
  const inst = fakeInstance();
  await setup(dir("health", [taken], undefined, 6), inst.ctx());
  await assert.rejects(inst.start(), (err: Error) => {
    assert.match(err.message, new RegExp(`^Corefile:6 - .*health: cannot listen on ${taken}: .*EADDRINUSE`));
    return true;
  });
  assert.equal(boundPort(taken), undefined);
  await inst.stop();
});

test("parseListenAddress", () => {
  assert.deepEqual(parseListenAddress(":8080"), { host: undefined, port: 8080, text: ":8080" });
  assert.deepEqual(parseListenAddress("localhost:8091"), {
    host: "localhost",
    port: 8091,
    text: "localhost:8091",
  });
  assert.deepEqual(parseListenAddress("[::1]:0"), { host: "::1", port: 0, text: "[::1]:0" });
  for (const bad of ["8080", "::1:8080", "[::1:80", "[1.2.3.4]:80", "a:70000", "host:", "a b:80"]) {
    assert.equal(typeof parseListenAddress(bad), "string", bad);
  }
});

test("setup errors name file:line", async () => {
  const bad: [Directive, RegExp][] = [
    [dir("health", ["8080"], undefined, 2), /^Corefile:2 - .*health: invalid address '8080'/],
    [dir("health", [":1", ":2"], undefined, 3), /^Corefile:3 - .*takes 0 to 1/],
    [dir("health", [], [dir("lameduck", ["soon"], undefined, 4)]), /^Corefile:4 - .*invalid duration/],
    [dir("health", [], [dir("lameduck", [], undefined, 5)]), /^Corefile:5 - .*'lameduck' takes 1/],
    [dir("health", [], [dir("path", ["/x"], undefined, 6)]), /^Corefile:6 - .*unknown property 'path'/],
  ];
  for (const [d, re] of bad) {
    await assert.rejects(
      async () => setup(d, fakeInstance().ctx()),
      (err: Error & { code?: string }) => err.code === "CDNS_ERR_CONFIG" && re.test(err.message),
      re.source,
    );
  }
});
