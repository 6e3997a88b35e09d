import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCorefile } from "../../corefile/parser.ts";
import type { Directive } from "../../corefile/types.ts";
import { parseCache, setup } from "./setup.ts";
import { liveCaches } from "./stats.ts";
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
      "  serve_stale_policy prefer_positive",
      "  servfail 10s",
      "  keepttl",
      "}",
    ].join("\n"),
  );
  assert.deepEqual(o.zones, ["example.org.", "example.net."]);
  assert.deepEqual(o.success, { capacity: 5000, maxTtl: 300, minTtl: 10 });
  assert.deepEqual(o.denial, { capacity: 2500, maxTtl: 60, minTtl: 5 });
  assert.deepEqual(o.prefetch, { amount: 10, durationMs: 120_000, percentage: 20 });
  assert.deepEqual(o.serveStale, { durationMs: 1_800_000, verify: true, preferPositive: true });
  assert.equal(o.servfailTtl, 10);
  assert.equal(o.keepTtl, true);
  assert.deepEqual(parse("cache {\n prefetch 2 30%\n serve_stale\n servfail 0\n}").prefetch, {
    amount: 2,
    durationMs: 60_000,
    percentage: 30,
  });
});

test("cache: every bad input names its file and line", () => {
  // [body, the line the error names (the body starts on line 2), what it says]
  const cases: [string, number, RegExp][] = [
    ["cache 0", 2, /0 is out of range/],
    ["cache -5", 2, /-5 is out of range/],
    ["cache 30 bad/zone", 2, /invalid zone .bad\/zone./],
    ["cache {\n size 10\n}", 3, /unknown property 'size'/],
    ["cache {\n success\n}", 3, /'success' takes 1 to 3 argument/],
    ["cache {\n success many\n}", 3, /'many' is not an integer/],
    ["cache {\n success 0\n}", 3, /0 is out of range/],
    ["cache {\n denial 10 0\n}", 3, /0 is out of range/],
    ["cache {\n success 10 30 60\n}", 3, /out of range \[0, 30\]/],
    ["cache {\n success 10 30 -1\n}", 3, /out of range \[0, 30\]/],
    ["cache {\n denial 10\n\n denial 20\n}", 5, /'denial' is given twice/],
    ["cache {\n success 10 {\n }\n}", 3, /'success' takes no block/],
    ["cache {\n prefetch\n}", 3, /'prefetch' takes 1 to 3 argument/],
    ["cache {\n prefetch 0\n}", 3, /0 is out of range/],
    ["cache {\n prefetch 2 1m 5%\n}", 3, /between 10% and 90%/],
    ["cache {\n prefetch 2 1m 95%\n}", 3, /between 10% and 90%/],
    ["cache {\n prefetch 2 1m ten%\n}", 3, /between 10% and 90%/],
    ["cache {\n prefetch 2 1m 10\n}", 3, /'10' is not a PERCENTAGE%/],
    ["cache {\n prefetch 2 10% 1m\n}", 3, /'1m' is not a PERCENTAGE%/],
    ["cache {\n prefetch 2 0s\n}", 3, /must be above 0/],
    ["cache {\n prefetch 2 soon\n}", 3, /invalid duration 'soon'/],
    ["cache {\n prefetch 2 1m 10% x\n}", 3, /takes 1 to 3 argument/],
    ["cache {\n serve_stale 1h later\n}", 3, /unknown refresh mode 'later'/],
    ["cache {\n serve_stale soon\n}", 3, /invalid duration 'soon'/],
    ["cache {\n serve_stale 1h verify now\n}", 3, /'serve_stale' takes 0 to 2 argument/],
    ["cache {\n serve_stale_policy prefer_positive\n}", 3, /serve_stale_policy: needs serve_stale/],
    [
      "cache {\n serve_stale\n serve_stale_policy newest\n}",
      4,
      /unknown policy 'newest' \(want prefer_positive\)/,
    ],
    ["cache {\n serve_stale\n serve_stale_policy\n}", 4, /'serve_stale_policy' takes 1 argument/],
    ["cache {\n servfail\n}", 3, /'servfail' takes 1 argument/],
    ["cache {\n servfail 10m\n}", 3, /at most 5m/],
    ["cache {\n servfail often\n}", 3, /invalid duration 'often'/],
    ["cache {\n disable\n}", 3, /'disable' takes at least 1 argument/],
    ["cache {\n disable everything\n}", 3, /'everything' is not success or denial/],
    ["cache example.org {\n disable success example.net\n}", 3, /'example.net.' is not inside/],
    ["cache {\n keepttl yes\n}", 3, /'keepttl' takes 0 argument/],
    ["cache {\n keepttl\n keepttl\n}", 4, /'keepttl' is given twice/],
  ];
  for (const [body, line, re] of cases) {
    const at = new RegExp(`^Corefile:${line} - Error during parsing: cache: .*${re.source}`);
    assert.throws(() => parse(body), configErrorLike(at), body);
  }
});

test("cache: ZONES default to the server block's; the instance shows its entries from start to stop", async () => {
  const zones = ["example.org.", "0.0.10.in-addr.arpa."];
  assert.deepEqual(parseCache(cacheDirective("cache 30"), zones).zones, zones);
  assert.deepEqual(parseCache(cacheDirective("cache sub.example.org"), zones).zones, ["sub.example.org."]);
  const f = fakeContext({ zones });
  const plugin = await setup(cacheDirective("cache"), f.ctx);
  assert.equal(typeof plugin, "function");
  const before = liveCaches.size;
  await f.start();
  assert.equal(liveCaches.size, before + 1);
  await f.stop();
  assert.equal(liveCaches.size, before, "a reload's old instance leaves no series behind");
});
