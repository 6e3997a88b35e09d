import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";

test("SIZE below 1232 becomes the block's UDP limit; several lines keep the smallest", async () => {
  const f = fakeContext();
  assert.equal(await setup(dir("bufsize", ["1000"]), f.ctx), undefined, "a setting, not a handler");
  assert.equal(f.ctx.block.udpSize, 1000);
  await setup(dir("bufsize", ["600"]), f.ctx);
  await setup(dir("bufsize", ["900"]), f.ctx);
  assert.equal(f.ctx.block.udpSize, 600);
});

test("1232 (the default) and above change nothing and say so", async () => {
  for (const args of [[], ["1232"], ["4096"]]) {
    const f = fakeContext();
    await setup(dir("bufsize", args), f.ctx);
    assert.equal(f.ctx.block.udpSize, undefined);
    assert.ok(f.logs.some((l) => /at most 1232 octets already/.test(l.msg)));
  }
});

test("setup checks SIZE", async () => {
  await assertConfigErrors(setup, [
    [dir("bufsize", ["511"]), /^Corefile:3 - .*bufsize: 511 is out of range \[512, 4096\]/],
    [dir("bufsize", ["4097"]), /out of range/],
    [dir("bufsize", ["big"]), /'big' is not an integer/],
    [dir("bufsize", ["512", "1024"]), /takes 0 to 1 argument/],
    [dir("bufsize", [], [dir("x")]), /takes no block/],
  ]);
});

test("end to end: UDP replies are cut to SIZE, also after the whole reply went out over TCP", async () => {
  // 40 A records: about 700 octets, over a 600-octet limit and within what dig offers (1232).
  const zone = zoneText(
    "b.test",
    ...Array.from({ length: 40 }, (_, i) => `big 60 IN A 192.0.2.${i + 1}`),
    "www 60 IN A 192.0.2.200",
  );
  const srv = await startServer("b.test {\n    bufsize 600\n    file db.b.test\n}\n", {
    files: { "db.b.test": zone },
  });
  try {
    const udp = () => dig(srv.port, "big.b.test", "A", "+bufsize=1232", "+ignore");
    for (const step of ["first", "again"]) {
      const r = await udp();
      assert.ok(r.flags.includes("tc"), `${step}: truncated`);
      assert.ok(r.size <= 600, `${step}: ${r.size} octets`);
    }
    const tcp = await dig(srv.port, "big.b.test", "A", "+tcp");
    assert.equal(tcp.answer.length, 40);
    assert.ok(tcp.size > 600);
    for (const step of ["after TCP", "after TCP again"]) {
      const r = await udp();
      assert.ok(r.flags.includes("tc"), `${step}: truncated`);
      assert.ok(r.size <= 600, `${step}: ${r.size} octets`);
    }
    // A small reply is not touched, and is answered from the cache as usual.
    for (let i = 0; i < 2; i++) {
      const small = await dig(srv.port, "www.b.test", "A", "+bufsize=1232");
      assert.deepEqual(small.answer, ["www.b.test. 60 IN A 192.0.2.200"]);
      assert.ok(!small.flags.includes("tc"));
    }
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
