import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCorefile } from "../../corefile/parser.ts";
import type { Directive } from "../../corefile/types.ts";
import { parseCache, setup } from "./setup.ts";
import { fakeContext } from "../../../test/helpers/setup-context.ts";
import { configErrorLike } from "../../../test/helpers/config-errors.ts";

/** The cache directive of a one-block Corefile. */
function cacheDirective(body: string): Directive {
  const [block] = parseCorefile(`. {\n${body}\n}\n`, "Corefile");
  return block.directives.find((d) => d.name === "cache")!;
}

const parse = (body: string) => parseCache(cacheDirective(body), ["."]);

test("cache: defaults are CoreDNS's", () => {
  const o = parse("cache");
  assert.deepEqual(o.zones, ["."]);
  assert.deepEqual(o.success, { capacity: 9984, maxTtl: 3600, minTtl: 5 });
  assert.deepEqual(o.denial, { capacity: 9984, maxTtl: 1800, minTtl: 5 });
  assert.equal(o.servfailTtl, 5);
  assert.equal(o.prefetch, undefined);
  assert.equal(o.serveStale, undefined);
  assert.equal(o.keepTtl, false);
});

test("cache: the kubeadm form and every option", () => {
  const k = parse("cache 30 {\n disable success cluster.local\n disable denial cluster.local\n}");
  assert.equal(k.success.maxTtl, 30);
  assert.equal(k.denial.maxTtl, 30);
  assert.deepEqual(k.disable, { success: ["cluster.local."], denial: ["cluster.local."] });

  const o = parse(
    [
      "cache 600 example.org example.net {",
      "  success 5000 300 10",
      "  denial 2500 60",
      "  prefetch 10 2m 20%",
      "  serve_stale 30m verify",
      "  servfail 10s",
      "  keepttl",
      "}",
    ].join("\n"),
  );
  assert.deepEqual(o.zones, ["example.org.", "example.net."]);
  assert.deepEqual(o.success, { capacity: 5000, maxTtl: 300, minTtl: 10 });
  assert.deepEqual(o.denial, { capacity: 2500, maxTtl: 60, minTtl: 5 });
  assert.deepEqual(o.prefetch, { amount: 10, durationMs: 120_000, percentage: 20 });
  assert.deepEqual(o.serveStale, { durationMs: 1_800_000, verify: true });
  assert.equal(o.servfailTtl, 10);
  assert.equal(o.keepTtl, true);
  assert.deepEqual(parse("cache {\n prefetch 2 30%\n serve_stale\n servfail 0\n}").prefetch, {
    amount: 2,
    durationMs: 60_000,
    percentage: 30,
  });
});

test("cache: every bad input names its file and line", () => {
  const cases: [string, RegExp][] = [
    ["cache 0", /^Corefile:2 - Error during parsing: cache: 0 is out of range/],
    ["cache 30 bad/zone", /invalid zone .bad\/zone./],
    ["cache {\n size 10\n}", /^Corefile:3 .*unknown property 'size'/],
    ["cache {\n success\n}", /'success' takes 1 to 3 argument/],
    ["cache {\n success many\n}", /'many' is not an integer/],
    ["cache {\n success 10 30 60\n}", /out of range \[0, 30\]/],
    ["cache {\n denial 10\n denial 20\n}", /'denial' is given twice/],
    ["cache {\n prefetch 2 1m 5%\n}", /between 10% and 90%/],
    ["cache {\n prefetch 2 0s\n}", /must be above 0/],
    ["cache {\n prefetch 2 1m 10% x\n}", /takes 1 to 3 argument/],
    ["cache {\n serve_stale 1h later\n}", /unknown refresh mode 'later'/],
    ["cache {\n serve_stale soon\n}", /invalid duration 'soon'/],
    ["cache {\n servfail 10m\n}", /at most 5m/],
    ["cache {\n disable everything\n}", /'everything' is not success or denial/],
    ["cache {\n keepttl yes\n}", /'keepttl' takes 0 argument/],
  ];
  for (const [body, re] of cases) assert.throws(() => parse(body), configErrorLike(re), body);
});

test("cache: one per server block", async () => {
  const f = fakeContext({ zones: ["."] });
  await setup(cacheDirective("cache"), f.ctx);
  await assert.rejects(async () => setup(cacheDirective("cache"), f.ctx), configErrorLike(/only one cache/));
});
