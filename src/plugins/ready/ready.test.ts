import { test } from "node:test";
import assert from "node:assert/strict";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { setup as healthSetup } from "../health/setup.ts";
import { boundPort } from "../../http/listener.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { httpGet as get } from "../../../test/helpers/http-get.ts";

const ADDR = "127.0.0.1:0";

test("/ready is 503 with the waiting plugins until every check passes, then 200 OK", async () => {
  const inst = fakeContext();
  let k8s = false;
  let files = false;
  inst.ctx.registerReady("kubernetes", () => k8s);
  inst.ctx.registerReady("file", () => files);
  inst.ctx.registerReady("file", () => true);
  assert.equal(await setup(dir("ready", [ADDR]), inst.ctx), undefined);
  await inst.start();
  const port = boundPort(ADDR)!;
  assert.ok(port);

  assert.deepEqual(await get(port, "/ready"), { status: 503, body: "file,kubernetes" });
  k8s = true;
  assert.deepEqual(await get(port, "/ready"), { status: 503, body: "file" });
  files = true;
  assert.deepEqual(await get(port, "/ready"), { status: 200, body: "OK" });
  assert.equal((await get(port, "/health")).status, 404);

  // until-ready (the default): a check that passed is not asked again.
  k8s = false;
  assert.equal((await get(port, "/ready")).status, 200);

  inst.instance.stopping = true;
  assert.equal((await get(port, "/ready")).status, 503);
  await inst.stop();
  assert.equal(boundPort(ADDR), undefined);
  assert.deepEqual(inst.logs, [], "ready does not log");
});

test("monitor continuously asks every check on every request", async () => {
  const inst = fakeContext();
  let up = true;
  inst.ctx.registerReady("kubernetes", () => up);
  await setup(dir("ready", [ADDR], [dir("monitor", ["continuously"])]), inst.ctx);
  await inst.start();
  const port = boundPort(ADDR)!;
  assert.equal((await get(port, "/ready")).status, 200);
  up = false;
  assert.deepEqual(await get(port, "/ready"), { status: 503, body: "kubernetes" });
  await inst.stop();
});

test("no checks at all: ready at once", async () => {
  const inst = fakeContext();
  await setup(dir("ready", [ADDR]), inst.ctx);
  await inst.start();
  assert.deepEqual(await get(boundPort(ADDR)!, "/ready"), { status: 200, body: "OK" });
  await inst.stop();
});

test("health and ready on one address share the listener", async () => {
  const inst = fakeContext();
  await setup(dir("ready", [ADDR]), inst.ctx);
  await healthSetup(dir("health", [ADDR]), inst.ctx);
  await inst.start();
  const port = boundPort(ADDR)!;
  assert.equal((await get(port, "/ready")).status, 200);
  assert.equal((await get(port, "/health")).status, 200);
  await inst.stop();
  assert.equal(boundPort(ADDR), undefined);
});

test("setup errors name file:line", async () => {
  const bad: [Directive, RegExp][] = [
    [dir("ready", ["localhost"], undefined, 2), /^Corefile:2 - .*ready: invalid address 'localhost'/],
    [dir("ready", [":1", ":2"], undefined, 3), /^Corefile:3 - .*takes 0 to 1/],
    [
      dir("ready", [], [dir("monitor", ["sometimes"], undefined, 4)]),
      /^Corefile:4 - .*unknown monitor 'sometimes'/,
    ],
    [dir("ready", [], [dir("monitor", [], undefined, 5)]), /^Corefile:5 - .*'monitor' takes 1/],
    [
      dir("ready", [], [dir("lameduck", ["1s"], undefined, 6)]),
      /^Corefile:6 - .*unknown property 'lameduck'/,
    ],
  ];
  await assertConfigErrors(setup, bad);
});
