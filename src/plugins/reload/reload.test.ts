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
  const at = { at: "Corefile:3" };
  assert.deepEqual(await settings([]), { intervalMs: 30_000, jitterMs: 15_000, ...at });
  assert.deepEqual(await settings(["10s"]), { intervalMs: 10_000, jitterMs: 5_000, ...at });
  assert.deepEqual(await settings(["1m", "2s"]), { intervalMs: 60_000, jitterMs: 2_000, ...at });
  assert.deepEqual(await settings(["2s", "1s"]), { intervalMs: 2_000, jitterMs: 1_000, ...at });
});

test("bad arguments are errors at file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("reload", ["1s"]), /Corefile:3 .*reload: interval must be at least 2s/],
    [dir("reload", ["5s", "500ms"]), /jitter must be 0 or at least 1s/],
    [dir("reload", ["soon"]), /invalid duration 'soon'/],
    [dir("reload", ["5s", "1s", "1s"]), /reload/],
    [dir("reload", [], [dir("every", ["5s"])]), /reload/],
  ]);
});

test("a jitter of 0 is no jitter, as CoreDNS takes it", async () => {
  assert.deepEqual(await settings(["10s", "0"]), { intervalMs: 10_000, jitterMs: 0, at: "Corefile:3" });
  assert.deepEqual(await settings(["10s", "0s"]), { intervalMs: 10_000, jitterMs: 0, at: "Corefile:3" });
});

test("a second reload line with other values wins, as in CoreDNS, and a warning names both lines", async () => {
  const f = fakeContext();
  await setup(dir("reload", ["10s"], undefined, 3), f.ctx);
  await setup(dir("reload", ["10s"], undefined, 7), f.ctx);
  assert.equal(f.logs.filter((l) => l.level >= 40).length, 0, "the same values again: nothing to say");
  await setup(dir("reload", ["20s"], undefined, 9), f.ctx);
  assert.deepEqual(f.ctx.instance.reload, { intervalMs: 20_000, jitterMs: 10_000, at: "Corefile:9" });
  const warned = f.logs.filter((l) => l.level === 40);
  assert.equal(warned.length, 1, JSON.stringify(f.logs));
  assert.match(String(warned[0].msg), /one interval for the whole Corefile/);
  assert.equal(warned[0].at, "Corefile:9");
  assert.equal(warned[0].before, "Corefile:7");
});
