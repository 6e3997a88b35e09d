import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Handler } from "../../chain/handler.ts";
import type { RR } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { loadbalance, preferReply } from "./loadbalance.ts";
import { WeightsFile, parseWeights } from "./weights.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { configErrorLike } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { rng } from "../../../test/helpers/rng.ts";
import { replyTo } from "../../dns/message.ts";
import { NetSet } from "../../dns/nets.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { Type } from "../../dns/constants.ts";
import { pino } from "pino";

const rrs = (...lines: string[]): RR[] => lines.map((l) => parseRRText(l));
const addressOf = (rr: RR) => (rr.data as { address: string }).address;

const WEB = rrs(
  "web.test. 30 IN A 192.0.2.1",
  "web.test. 30 IN A 192.0.2.2",
  "web.test. 30 IN A 192.0.2.3",
  "web.test. 30 IN AAAA 2001:db8::1",
);

function answering(answer: RR[]): Handler {
  return {
    name: "answer",
    serve(req) {
      const m = replyTo(req.msg);
      m.answer = [...answer];
      return Promise.resolve(m);
    },
  };
}

test("the weights file: sections by name, ADDRESS WEIGHT lines, comments; mistakes name file:line", () => {
  const w = parseWeights(
    "# weights\nWeb.Test\n192.0.2.1 3\n 2001:DB8:0::1   0 # never first\n\nother.test.\n192.0.2.9 255\n",
    "w.txt",
  );
  assert.deepEqual(
    [...w].map(([name, m]) => [name, [...m]]),
    [
      [
        "web.test.",
        [
          ["192.0.2.1", 3],
          ["2001:db8::1", 0],
        ],
      ],
      ["other.test.", [["192.0.2.9", 255]]],
    ],
  );
  for (const [text, re] of [
    ["192.0.2.1 3\n", /^w\.txt:1: an address before any domain name/],
    ["a.test\nwww.example 5\n", /^w\.txt:2: 'www.example' is not an IP address/],
    ["a.test\n192.0.2.1 256\n", /^w\.txt:2: weight '256' is not 0 to 255/],
    ["a.test\n192.0.2.1 x\n", /weight 'x'/],
    ["a.test\n\n192.0.2.1 1 2\n", /^w\.txt:3: want a domain name, or ADDRESS WEIGHT, got 3 fields/],
    ["bad..name\n", /'bad\.\.name' is not a domain name/],
  ] as const) {
    assert.throws(() => parseWeights(text, "w.txt"), { message: re });
  }
});

test("weighted: the first address is drawn in proportion to its weight; unlisted addresses weigh 1", async () => {
  const weights = parseWeights("web.test\n192.0.2.1 6\n192.0.2.2 2\n2001:db8::1 0\n", "w");
  const h = loadbalance({ weights: () => weights, random: rng(7) })(answering(WEB));
  const first = new Map<string, number>();
  for (let i = 0; i < 4500; i++) {
    const m = await h.serve(makeRequest("web.test", Type.A));
    assert.deepEqual(m.answer.map(rrToText).sort(), WEB.map(rrToText).sort(), "no record lost");
    const a = addressOf(m.answer[0]);
    first.set(a, (first.get(a) ?? 0) + 1);
  }
  // Weights 6 : 2 : 1 (192.0.2.3 is not listed) : 0 of 9: 3000, 1000, 500, none.
  assert.equal(first.get("2001:db8::1"), undefined, "weight 0 is never first");
  for (const [address, want] of [
    ["192.0.2.1", 3000],
    ["192.0.2.2", 1000],
    ["192.0.2.3", 500],
  ] as const) {
    const n = first.get(address) ?? 0;
    assert.ok(Math.abs(n - want) < want * 0.15, `${address} first ${n} times, want about ${want}`);
  }
});

test("weighted: the other addresses keep their order, and the reply is never replayed", async () => {
  const weights = parseWeights("web.test\n192.0.2.3 1\n192.0.2.1 0\n192.0.2.2 0\n2001:db8::1 0\n", "w");
  const h = loadbalance({ weights: () => weights })(answering(WEB));
  const req = makeRequest("web.test", Type.A);
  const m = await h.serve(req);
  assert.deepEqual(m.answer.map(addressOf), ["192.0.2.3", "192.0.2.1", "192.0.2.2", "2001:db8::1"]);
  assert.equal(req.cache.maxAge, 0);
  assert.equal(req.cache.rotate, false);
  const single = makeRequest("web.test", Type.A);
  await loadbalance({ weights: () => weights })(answering(WEB.slice(0, 1))).serve(single);
  assert.equal(single.cache.maxAge, Infinity, "nothing drawn: cached as usual");
});

test("prefer: addresses of the listed networks first, in the order listed, each group's order kept", () => {
  const nets = ["2001:db8::/32", "192.0.2.3"].map((n) => {
    const s = new NetSet();
    s.add(n);
    return s;
  });
  const cname = parseRRText("www.test. 30 IN CNAME web.test.");
  const m = replyTo(makeRequest("www.test", Type.A).msg);
  m.answer = [cname, ...WEB];
  assert.equal(preferReply(m, nets), true);
  assert.deepEqual(m.answer.slice(1).map(addressOf), ["2001:db8::1", "192.0.2.3", "192.0.2.1", "192.0.2.2"]);
  assert.equal(m.answer[0], cname, "other records keep their place");
  const none = replyTo(m);
  none.answer = WEB.slice(0, 2);
  assert.equal(preferReply(none, nets), false, "all in one group: nothing to say");
});

test("prefer with round_robin: a reply split in groups is not rotated by the answer cache", async () => {
  const nets = new NetSet();
  nets.add("192.0.2.3/32");
  const split = makeRequest("web.test", Type.A);
  const m = await loadbalance({ prefer: [nets], random: rng(1) })(answering(WEB.slice(0, 3))).serve(split);
  assert.equal(addressOf(m.answer[0]), "192.0.2.3");
  assert.equal(split.cache.rotate, false);
  const other = new NetSet();
  other.add("198.51.100.0/24");
  const whole = makeRequest("web.test", Type.A);
  await loadbalance({ prefer: [other], random: rng(1) })(answering(WEB.slice(0, 3))).serve(whole);
  assert.equal(whole.cache.rotate, true, "no address preferred: rotated as before");
});

test("the weights file is read again when it changes; a broken one keeps the weights before", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-weights-"));
  const path = join(dir, "w");
  writeFileSync(path, "a.test\n192.0.2.1 5\n");
  const f = new WeightsFile(path, parseWeights("a.test\n192.0.2.1 5\n", path), "", pino({ level: "silent" }));
  assert.equal(await f.check(), true, "a first stamp differs");
  writeFileSync(path, "a.test\n192.0.2.1 7\nb.test\n");
  assert.equal(await f.check(), true);
  assert.equal(f.current.get("a.test.")?.get("192.0.2.1"), 7);
  assert.equal(await f.check(), false, "unchanged");
  writeFileSync(path, "a.test\n192.0.2.1 seven\n");
  assert.equal(await f.check(), false);
  assert.equal(f.current.get("a.test.")?.get("192.0.2.1"), 7);
});

test("setup: a bad weights file stops start-up at the directive, naming the file's line", async () => {
  const d = mkdtempSync(join(tmpdir(), "clusterdns-weights-"));
  writeFileSync(join(d, "w"), "a.test\n192.0.2.1 300\n");
  await assert.rejects(
    async () => setup(dir("loadbalance", ["weighted", "w"], undefined, 5), fakeContext({ root: d }).ctx),
    configErrorLike(/^Corefile:5 - .*loadbalance: .*\/w:2: weight '300' is not 0 to 255/),
  );
  writeFileSync(join(d, "ok"), "a.test\n192.0.2.1 3\n");
  const f = fakeContext({ root: d });
  assert.ok(await setup(dir("loadbalance", ["weighted", "ok"], [dir("reload", ["0"])]), f.ctx));
  assert.equal(f.startup.length, 0, "reload 0: no polling");
  assert.ok(await setup(dir("loadbalance", ["weighted", "ok"]), f.ctx));
  assert.equal(f.startup.length, 1, "polled every 30s by default");
});

test("end to end: weighted and prefer hold on every query, answer cache or not", async () => {
  const zone = zoneText("lb.test", ...["1", "2", "3"].map((n) => `web 60 IN A 192.0.2.${n}`));
  const files = { "db.lb.test": zone, weights: "web.lb.test\n192.0.2.2 9\n192.0.2.1 0\n192.0.2.3 0\n" };
  const weighted = await startServer(
    "lb.test {\n    loadbalance weighted weights\n    file db.lb.test\n}\n",
    {
      files,
    },
  );
  const preferred = await startServer(
    "lb.test {\n    loadbalance round_robin {\n        prefer 192.0.2.3/32\n    }\n    file db.lb.test\n}\n",
    { files },
  );
  try {
    for (let i = 0; i < 4; i++) {
      const w = await dig(weighted.port, "web.lb.test", "A");
      assert.equal(w.answer.length, 3);
      assert.equal(w.answer[0], "web.lb.test. 60 IN A 192.0.2.2", `weighted, query ${i}`);
      const p = await dig(preferred.port, "web.lb.test", "A");
      assert.equal(p.answer.length, 3);
      assert.equal(p.answer[0], "web.lb.test. 60 IN A 192.0.2.3", `prefer, query ${i}`);
    }
  } finally {
    assert.equal(await weighted.stop(), 0);
    assert.equal(await preferred.stop(), 0);
  }
});
