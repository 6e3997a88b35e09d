import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { boundPort, parseListenAddress } from "../../http/listener.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors, configErrorLike } from "../../../test/helpers/config-errors.ts";
import { httpGet as get } from "../../../test/helpers/http-get.ts";

const ADDR = "127.0.0.1:0";

test("GET /health answers 200 OK; other paths 404; the listener closes at shutdown", async () => {
  const inst = fakeContext();
  assert.equal(await setup(dir("health", [ADDR]), inst.ctx), undefined);
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
  assert.deepEqual(inst.logs, [], "health does not log");
});

test("blocks naming the same address share one listener until the last lets go", async () => {
  const a = fakeContext();
  const b = fakeContext();
  await setup(dir("health", [ADDR]), a.ctx);
  await setup(dir("health", [ADDR]), b.ctx);
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
  const inst = fakeContext();
  await setup(dir("health", [], [dir("lameduck", ["5s"])]), inst.ctx);
  await setup(dir("health", [":8081"], [dir("lameduck", ["2s"])]), inst.ctx);
  assert.equal(inst.instance.lameduckMs, 5000);
});

test("an address in use fails start-up, naming the address and file:line", async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  t.after(() => blocker.close());
  const taken = `127.0.0.1:${(blocker.address() as { port: number }).port}`;
  const inst = fakeContext();
  await setup(dir("health", [taken], undefined, 6), inst.ctx);
  await assert.rejects(
    inst.start(),
    configErrorLike(new RegExp(`^Corefile:6 - health: cannot listen on ${taken}: the address is in use`)),
  );
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
  await assertConfigErrors(setup, bad);
});
