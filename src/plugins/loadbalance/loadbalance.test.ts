import { test } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { SHUFFLED_REPLAY_SECONDS } from "../../answers/policy.ts";
import type { Handler } from "../../chain/handler.ts";
import type { RR } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { loadbalance, roundRobin } from "./loadbalance.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { rng } from "../../../test/helpers/rng.ts";
import { replyTo } from "../../dns/message.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const rrs = (...lines: string[]): RR[] => lines.map((l) => parseRRText(l));
const text = (list: RR[]) => list.map(rrToText);
const sorted = (list: RR[]) => text(list).sort();

/** A next handler that answers with copies of these records. */
function answering(answer: RR[], additional: RR[] = []): Handler {
  return {
    name: "answer",
    serve(req) {
      const m = replyTo(req.msg);
      m.answer = [...answer];
      m.additional = [...additional];
      return Promise.resolve(m);
    },
  };
}

const ADDRS = rrs(
  "web.test. 30 IN A 10.0.0.1",
  "web.test. 30 IN A 10.0.0.2",
  "web.test. 30 IN A 10.0.0.3",
  "web.test. 30 IN A 10.0.0.4",
);
const CNAME = rrs("www.test. 30 IN CNAME web.test.")[0];

test("roundRobin puts CNAMEs first, keeps other records in order, shuffles addresses and MX", () => {
  const input = rrs(
    "a.test. 30 IN A 10.0.0.1",
    "a.test. 30 IN MX 10 mx1.test.",
    'a.test. 30 IN TXT "one"',
    "a.test. 30 IN AAAA 2001:db8::1",
    "x.test. 30 IN CNAME a.test.",
    "a.test. 30 IN MX 20 mx2.test.",
    'a.test. 30 IN TXT "two"',
  );
  // random() = 0 always swaps with the first element: a rotation by one for each set of two or more.
  const { rrs: out, shuffled } = roundRobin(input, () => 0);
  assert.equal(shuffled, true);
  assert.deepEqual(
    out.map((r) => r.type),
    [Type.CNAME, Type.TXT, Type.TXT, Type.AAAA, Type.A, Type.MX, Type.MX],
  );
  assert.deepEqual(text(out.slice(1, 3)), text([input[2], input[6]]), "other records keep their order");
  assert.deepEqual(text(out.slice(5)), text([input[5], input[1]]));
  assert.deepEqual(sorted(out), sorted(input), "no record lost or added");
});

test("roundRobin makes every order of three addresses, about equally often", () => {
  const random = rng(20240601);
  const counts = new Map<string, number>();
  const three = ADDRS.slice(0, 3);
  for (let i = 0; i < 6000; i++) {
    const key = roundRobin(three, random)
      .rrs.map((r) => (r.data as { address: string }).address.slice(-1))
      .join("");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  assert.equal(counts.size, 6, `all 6 orders seen: ${[...counts.keys()].join(" ")}`);
  for (const [order, n] of counts) assert.ok(n > 800 && n < 1200, `${order} seen ${n} times of 6000`);
});

test("roundRobin leaves a single record or no addresses unmarked", () => {
  assert.equal(roundRobin(ADDRS.slice(0, 1), () => 0).shuffled, false);
  assert.equal(roundRobin([CNAME, ADDRS[0]], () => 0).shuffled, false);
  assert.equal(roundRobin(rrs('t. 1 IN TXT "a"', 't. 1 IN TXT "b"'), () => 0).shuffled, false);
});

test("the handler shuffles the answer and additional sections and caps the cache replay", async () => {
  const h = loadbalance({ random: () => 0 })(answering([...ADDRS, CNAME], ADDRS.slice(0, 2)));
  const req = makeRequest("www.test", Type.A);
  const m = await h.serve(req);
  assert.equal(m.answer[0].type, Type.CNAME);
  assert.deepEqual(sorted(m.answer.slice(1)), sorted(ADDRS));
  assert.notDeepEqual(text(m.answer.slice(1)), text(ADDRS), "the order changed");
  assert.deepEqual(text(m.additional), text([ADDRS[1], ADDRS[0]]));
  assert.equal(req.cache.maxAge, SHUFFLED_REPLAY_SECONDS);
});

test("only addresses of one name: the answer cache is asked to rotate them instead of a short replay", async () => {
  const req = makeRequest("web.test", Type.A);
  const m = await loadbalance({ random: () => 0 })(answering(ADDRS)).serve(req);
  assert.deepEqual(sorted(m.answer), sorted(ADDRS));
  assert.equal(req.cache.rotate, true);
  assert.equal(req.cache.maxAge, Infinity);
  const limited = makeRequest("web.test", Type.A);
  await loadbalance({ limitAnswers: 2 })(answering(ADDRS)).serve(limited);
  assert.equal(
    limited.cache.rotate,
    false,
    "a cut answer is not rotated: the records left out would never show",
  );
  assert.equal(limited.cache.maxAge, SHUFFLED_REPLAY_SECONDS);
});

test("the handler keeps a lower maxAge, and leaves maxAge alone when nothing was shuffled", async () => {
  const lower = makeRequest("www.test", Type.A);
  lower.cache.limit(0);
  await loadbalance()(answering([CNAME, ...ADDRS])).serve(lower);
  assert.equal(lower.cache.maxAge, 0);
  const one = makeRequest("web.test", Type.A);
  const m = await loadbalance()(answering([CNAME, ADDRS[0]])).serve(one);
  assert.equal(one.cache.maxAge, Infinity);
  assert.deepEqual(text(m.answer), text([CNAME, ADDRS[0]]));
});

test("zone transfers keep their order", async () => {
  const m = await loadbalance({ random: () => 0 })(answering(ADDRS)).serve(makeRequest("test", Type.AXFR));
  assert.deepEqual(text(m.answer), text(ADDRS));
});

test("limit_answers keeps the first N records after shuffling, CNAME included", async () => {
  const { ctx } = fakeContext();
  const plugin = await setup(dir("loadbalance", ["round_robin"], [dir("limit_answers", ["2"])]), ctx);
  assert.ok(plugin);
  const m = await plugin(answering([...ADDRS, CNAME])).serve(makeRequest("www.test", Type.A));
  assert.equal(m.answer.length, 2);
  assert.equal(m.answer[0].type, Type.CNAME);
  const plain = await setup(dir("loadbalance"), ctx);
  assert.ok(plain);
  assert.equal((await plain(answering(ADDRS)).serve(makeRequest("web.test", Type.A))).answer.length, 4);
});

test("setup rejects bad policies and options with file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("loadbalance", ["random"]), /unknown policy 'random'/],
    [dir("loadbalance", ["round_robin", "file"]), /round_robin takes no file/],
    [dir("loadbalance", ["weighted"], undefined, 4), /^Corefile:4 - .*weighted needs the weights file/],
    [dir("loadbalance", ["weighted", "/nonexistent/weights"]), /ENOENT/],
    [
      dir("loadbalance", [], [dir("reload", ["10s"], undefined, 6)]),
      /^Corefile:6 - .*'reload' applies to the weighted policy only/,
    ],
    [dir("loadbalance", [], [dir("limit_answers", ["0"])]), /out of range/],
    [dir("loadbalance", [], [dir("limit_answers", [])]), /takes 1 argument/],
    [dir("loadbalance", [], [dir("prefer", ["10.0.0.0/33"])]), /prefix length must be 0 to 32/],
    [dir("loadbalance", [], [dir("prefer", [])]), /takes at least 1 argument/],
    [dir("loadbalance", [], [dir("perfer", ["10.0.0.0/8"])]), /unknown property 'perfer'/],
  ]);
});

test("end to end: dig gets the CNAME first and every address", async () => {
  const zone = zoneText(
    "lb.test",
    "www 60 IN CNAME web",
    ...["1", "2", "3", "4"].map((n) => `web 60 IN A 192.0.2.${n}`),
  );
  const srv = await startServer("lb.test {\n    loadbalance round_robin\n    file db.lb.test\n}\n", {
    files: { "db.lb.test": zone },
  });
  try {
    const r = await dig(srv.port, "www.lb.test", "A");
    assert.equal(r.status, "NOERROR");
    assert.equal(r.answer[0], "www.lb.test. 60 IN CNAME web.lb.test.");
    assert.deepEqual(
      r.answer.slice(1).sort(),
      ["1", "2", "3", "4"].map((n) => `web.lb.test. 60 IN A 192.0.2.${n}`),
    );
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("end to end: replies from the answer cache rotate a headless-style address set on every query", async () => {
  const zone = zoneText("lb.test", ...["1", "2", "3"].map((n) => `web 60 IN A 192.0.2.${n}`));
  const srv = await startServer("lb.test {\n    loadbalance\n    file db.lb.test\n}\n", {
    files: { "db.lb.test": zone },
  });
  try {
    const orders: string[][] = [];
    for (let i = 0; i < 4; i++) orders.push((await dig(srv.port, "web.lb.test", "A")).answer);
    const all = ["1", "2", "3"].map((n) => `web.lb.test. 60 IN A 192.0.2.${n}`);
    for (const o of orders) assert.deepEqual([...o].sort(), all);
    // Each reply is the one before rotated by one record; the fourth is the first again.
    for (let i = 1; i < 4; i++) assert.deepEqual(orders[i], [...orders[i - 1].slice(1), orders[i - 1][0]]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("end to end: a forwarded reply with no records passes loadbalance untouched (it once hung the server)", async () => {
  // An upstream that answers every query with RCODE and no record at all, not even an OPT (one that
  // does not do EDNS): loadbalance read the first answer record of a reply that had none, and the walk
  // past the end of the message never ended.
  const upstream = createSocket("udp4");
  let rcode: number = Rcode.SERVFAIL;
  upstream.on("message", (q, from) => {
    let end = 12;
    while (q[end] !== 0) end += q[end] + 1;
    const header = Buffer.from([q[0], q[1], 0x81, 0x80 | rcode, 0, 1, 0, 0, 0, 0, 0, 0]);
    upstream.send(Buffer.concat([header, q.subarray(12, end + 5)]), from.port, from.address);
  });
  await new Promise<void>((resolve) => upstream.bind(0, "127.0.0.1", resolve));
  try {
    const srv = await startServer(
      `. {\n    forward . 127.0.0.1:${upstream.address().port}\n    loadbalance\n}\n`,
    );
    try {
      for (const [rc, status] of [
        [Rcode.SERVFAIL, "SERVFAIL"],
        [Rcode.NOERROR, "NOERROR"],
        [Rcode.NXDOMAIN, "NXDOMAIN"],
        [Rcode.REFUSED, "REFUSED"],
      ] as const) {
        rcode = rc;
        const r = await dig(srv.port, `q${rc}.example`, "A", "+noedns", "+tries=1", "+time=3");
        assert.equal(r.status, status);
        assert.deepEqual(r.answer, []);
      }
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  } finally {
    upstream.close();
  }
});
