import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCorefile } from "../../corefile/parser.ts";
import type { Directive } from "../../corefile/types.ts";
import { parseRrl, setup } from "./setup.ts";
import { fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

function directive(body: string, zones = "example.org"): Directive {
  const [block] = parseCorefile(`${zones} {\n${body}\n}\n`, "Corefile");
  return block.directives[0];
}

test("rrl: BIND's defaults; the other allowances follow responses-per-second", () => {
  const o = parseRrl(directive("rrl {\n responses-per-second 20\n nxdomains-per-second 5\n}"), [
    "example.org.",
  ]);
  assert.deepEqual(o, {
    zones: [],
    windowS: 15,
    v4Bits: 24,
    v6Bits: 56,
    responses: 20,
    nodata: 20,
    nxdomains: 5,
    referrals: 20,
    errors: 20,
    slip: 2,
    maxTable: 100_000,
    reportOnly: false,
  });
});

test("rrl: every option, and ZONES inside the block's", () => {
  const o = parseRrl(
    directive(
      "rrl sub.example.org {\n window 5\n ipv4-prefix-length 32\n ipv6-prefix-length 128\n responses-per-second 1\n" +
        " nodata-per-second 2\n nxdomains-per-second 3\n referrals-per-second 4\n errors-per-second 0\n" +
        " slip-ratio 0\n max-table-size 10\n report-only\n}",
    ),
    ["example.org."],
  );
  assert.deepEqual(
    [o.zones, o.windowS, o.v4Bits, o.v6Bits, o.responses, o.nodata, o.nxdomains, o.referrals, o.errors],
    [["sub.example.org."], 5, 32, 128, 1, 2, 3, 4, 0],
  );
  assert.deepEqual([o.slip, o.maxTable, o.reportOnly], [0, 10, true]);
});

test("rrl: on the block for the pipeline; all allowances 0 limits nothing and says so; one per block", async () => {
  const f = fakeContext({ zones: ["example.org."] });
  await setup(directive("rrl {\n responses-per-second 5\n}"), f.ctx);
  assert.ok(f.ctx.block.rrl);
  await assert.rejects(
    async () => setup(directive("rrl {\n responses-per-second 5\n}"), f.ctx),
    /Corefile:2 .*one rrl per server block/,
  );
  const off = fakeContext({ zones: ["example.org."] });
  await setup(directive("rrl"), off.ctx);
  assert.equal(off.ctx.block.rrl, undefined);
  assert.ok(off.logs.some((l) => l.msg === "every allowance is 0: nothing is limited"));
});

test("rrl: bad stanzas stop start-up at their line", async () => {
  const ctx = () => fakeContext({ zones: ["example.org."] }).ctx;
  await assertConfigErrors(
    setup,
    [
      [directive("rrl example.net"), /Corefile:2 .*zone 'example.net.' is not inside/],
      [directive("rrl {\n window 0\n}"), /Corefile:3 .*0 is out of range \[1, 3600\]/],
      [directive("rrl {\n ipv4-prefix-length 33\n}"), /Corefile:3 .*33 is out of range \[0, 32\]/],
      [directive("rrl {\n ipv6-prefix-length -1\n}"), /Corefile:3 .*out of range \[0, 128\]/],
      [directive("rrl {\n responses-per-second many\n}"), /Corefile:3 .*'many' is not an integer/],
      [directive("rrl {\n slip-ratio 11\n}"), /Corefile:3 .*out of range \[0, 10\]/],
      [directive("rrl {\n window\n}"), /Corefile:3 .*'window' takes 1 argument/],
      [directive("rrl {\n report-only yes\n}"), /Corefile:3 .*'report-only' takes 0 argument/],
      [directive("rrl {\n requests-per-second 10\n}"), /Corefile:3 .*requests-per-second is not supported/],
      [directive("rrl {\n burst 10\n}"), /Corefile:3 .*unknown property 'burst'/],
    ],
    ctx,
  );
});
