import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

async function settings(args: string[]) {
  const f = fakeContext();
  assert.equal(await setup(dir("reload", args), f.ctx), undefined, "reload adds no handler");
  return f.ctx.instance.reload;
}

test("defaults 30s +- 15s; a jitter over half the interval is cut to half", async () => {
  assert.deepEqual(await settings([]), { intervalMs: 30_000, jitterMs: 15_000 });
  assert.deepEqual(await settings(["10s"]), { intervalMs: 10_000, jitterMs: 5_000 });
  assert.deepEqual(await settings(["1m", "2s"]), { intervalMs: 60_000, jitterMs: 2_000 });
  assert.deepEqual(await settings(["2s", "1s"]), { intervalMs: 2_000, jitterMs: 1_000 });
});

test("bad arguments are errors at file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("reload", ["1s"]), /Corefile:3 .*reload: interval must be at least 2s/],
    [dir("reload", ["5s", "500ms"]), /jitter must be at least 1s/],
    [dir("reload", ["soon"]), /invalid duration 'soon'/],
    [dir("reload", ["5s", "1s", "1s"]), /reload/],
    [dir("reload", [], [dir("every", ["5s"])]), /reload/],
  ]);
});

test("two blocks with different intervals are an error", async () => {
  const f = fakeContext();
  await setup(dir("reload", ["10s"]), f.ctx);
  await assert.rejects(async () => setup(dir("reload", ["20s"]), f.ctx), /different reload intervals/);
  await setup(dir("reload", ["10s"]), f.ctx);
});
