import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Block } from "./block.ts";
import type { Handler } from "../chain/handler.ts";
import { Pipeline, STABLE_CACHE_SECONDS } from "./pipeline.ts";
import { ClientCosts } from "./client-costs.ts";
import { quietly } from "./warm-up.ts";
import { clientCostStats } from "../metrics/server-stats.ts";
import { newQuery, replyTo, type Msg } from "../dns/message.ts";
import { encode } from "../dns/encode.ts";
import { scanQuery } from "../dns/scan.ts";
import { NO_SLOT } from "../answers/store.ts";
import { decode } from "../dns/decode.ts";
import { Cache } from "../plugins/cache/cache.ts";
import { Rcode, Type } from "../dns/constants.ts";

function pipelineWith(chain: Handler): Pipeline {
  const p = new Pipeline("dns://:53", pino({ level: "silent" }));
  const block: Block = {
    keys: [],
    zones: ["example.org."],
    chain,
    hooks: [],
    bind: [],
    directives: [],
    shared: new Map(),
  };
  p.mux.add("example.org.", block);
  return p;
}

/** A reply to `query` with one A record, 192.0.2.7, of this TTL. */
function answerA(query: Msg, ttl: number): Msg {
  const r = replyTo(query);
  const name = query.question[0].name;
  r.answer.push({ name, type: Type.A, class: 1, ttl, data: { type: Type.A, address: "192.0.2.7" } });
  return r;
}

test("lookup runs an internal query through the mux and chain, with its depth", async () => {
  const seen: { qname: string; private: boolean; depth?: number }[] = [];
  const p = pipelineWith({
    name: "answer",
    async serve(req) {
      seen.push({ qname: req.qname, private: req.cache.private, depth: req.depth });
      return answerA(req.msg, 5);
    },
  });
  const r = await p.lookup("www.example.org.", Type.A, 2);
  assert.equal(r.rcode, Rcode.NOERROR);
  assert.deepEqual(r.answer[0]?.data, { type: Type.A, address: "192.0.2.7" });
  assert.deepEqual(seen, [{ qname: "www.example.org.", private: false, depth: 2 }]);
  assert.equal(p.answers.size, 0, "only what `cache` keeps of an internal lookup is stored");
});

test("lookup carries the asking query's deadline, and past it answers SERVFAIL without running", async () => {
  const deadlines: (number | undefined)[] = [];
  const p = pipelineWith({
    name: "answer",
    async serve(req) {
      deadlines.push(req.deadline);
      return answerA(req.msg, 5);
    },
  });
  const later = Date.now() + 60_000;
  assert.equal((await p.lookup("www.example.org.", Type.A, 1, later)).rcode, Rcode.NOERROR);
  assert.equal((await p.lookup("www.example.org.", Type.A, 1, Date.now() - 1)).rcode, Rcode.SERVFAIL);
  assert.deepEqual(deadlines, [later]);
});

test("lookup answers from and fills the answer cache through `cache`, as a client without EDNS", async () => {
  let asked = 0;
  const upstream: Handler = {
    name: "forward",
    async serve(req) {
      asked++;
      return answerA(req.msg, 60);
    },
  };
  const cache = new Cache({
    zones: ["."],
    success: { capacity: 10, maxTtl: 30, minTtl: 5 },
    denial: { capacity: 10, maxTtl: 30, minTtl: 5 },
    servfailTtl: 5,
    disable: { success: [], denial: [] },
    keepTtl: false,
  });
  const p = pipelineWith(cache.handler(upstream));
  for (let i = 0; i < 2; i++) {
    const r = await p.lookup("www.example.org.", Type.A, 1);
    assert.deepEqual(
      r.answer.map((rr) => rr.ttl),
      [30],
    );
  }
  assert.equal(asked, 1, "the second lookup came from the entry");
  const out = await p.handle(encode(newQuery("www.example.org.", Type.A, 1, 9)), peer);
  assert.equal(decode(out!).answer[0].ttl, 30);
  assert.equal(asked, 1, "a client's query is answered from the lookup's entry");
});

test("lookup: REFUSED outside every zone, SERVFAIL past the depth limit or when the chain throws", async () => {
  let calls = 0;
  const p = pipelineWith({
    name: "boom",
    async serve() {
      calls++;
      throw new Error("boom");
    },
  });
  assert.equal((await p.lookup("www.example.net.", Type.A, 1)).rcode, Rcode.REFUSED);
  assert.equal((await p.lookup("www.example.org.", Type.A, 99)).rcode, Rcode.SERVFAIL);
  assert.equal(calls, 0, "too deep: the chain is not called");
  assert.equal((await p.lookup("www.example.org.", Type.A, 1)).rcode, Rcode.SERVFAIL);
  assert.equal(calls, 1);
});

const peer = {
  proto: "udp" as const,
  remoteAddress: "127.0.0.1",
  remotePort: 5300,
  localAddress: "127.0.0.1",
  localPort: 53,
};

test("a stable reply outlives its TTL in the answer cache; invalidation still drops it", async () => {
  const answer = (stable: boolean): Handler => ({
    name: "answer",
    async serve(req) {
      req.cache.stable = stable;
      const r = answerA(req.msg, 5);
      r.aa = true;
      return r;
    },
  });
  const buf = encode(newQuery("www.example.org.", Type.A, 1, 7));
  const s = scanQuery(buf);
  assert.ok(!("drop" in s));
  for (const stable of [false, true]) {
    const p = pipelineWith(answer(stable));
    await p.handle(buf, peer);
    const at = (secs: number): boolean => {
      p.answers.clock[0] = Date.now() + secs * 1000;
      return p.answers.lookup(s.keyBytes, 0, s.keyLength, s.keyHash) !== NO_SLOT;
    };
    assert.equal(at(4), true, `stable=${stable}: cached within the TTL`);
    assert.equal(at(6), stable, `stable=${stable}: past the TTL only when stable`);
    assert.equal(at(STABLE_CACHE_SECONDS + 1), false, "never past the stable bound");
    p.answers.invalidateNames(["www.example.org."]);
    assert.equal(at(1), false, "invalidation drops it");
  }
});

test("a caller may reuse the peer object once handle returns: a reply computed later keeps its own", async () => {
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  const seen: string[] = [];
  const p = pipelineWith({
    name: "slow",
    async serve(req) {
      await held;
      seen.push(`${req.remoteAddress}:${req.remotePort}`);
      return answerA(req.msg, 5);
    },
  });
  let hooked = "";
  (p.mux.match("example.org.")!.value as Block).hooks.push(
    (q) => (hooked = `${q.remoteAddress}:${q.remotePort}`),
  );
  const reused = { ...peer, remoteAddress: "192.0.2.1", remotePort: 1111 };
  const pending = p.handle(encode(newQuery("www.example.org.", Type.A, 1, 1)), reused);
  reused.remoteAddress = "192.0.2.2";
  reused.remotePort = 2222;
  release();
  await pending;
  assert.deepEqual([seen[0], hooked], ["192.0.2.1:1111", "192.0.2.1:1111"]);
});

test("a client past its share of the CPU is deferred, then refused; another client is answered at once", async () => {
  // Every reply holds 1,000 A records (about 16 KB): each costs its client about 1 ms of its share.
  const big: Handler = {
    name: "forward",
    async serve(req) {
      const r = replyTo(req.msg);
      for (let i = 0; i < 1000; i++) {
        const data = { type: Type.A, address: `10.0.${i >> 8}.${i & 255}` } as const;
        r.answer.push({ name: req.qname, type: Type.A, class: 1, ttl: 60, data });
      }
      req.cache.limit(0);
      return r;
    },
  };
  const p = pipelineWith(big);
  p.costs = new ClientCosts({ shareUs: 5_000, maxWaitMs: 1000, always: true });
  const peer = (remoteAddress: string) => ({
    proto: "tcp" as const,
    remoteAddress,
    remotePort: 5353,
    localAddress: "127.0.0.1",
    localPort: 53,
  });
  const ask = async (from: string, i: number) => {
    const out = await p.handle(encode(newQuery(`n${i}.example.org.`, Type.A, 1, i)), peer(from));
    return decode(out!).rcode;
  };
  /** Charges 10.0.0.1 until its credit is `us` (negative: a debt of -us / 5 ms seconds). */
  const owe = (us: number) => {
    const now = performance.now();
    p.costs.chargeChain("10.0.0.1", (p.costs.credit("10.0.0.1", now) - us - 50) * 16, now);
  };
  // 5 ms of credit: a few replies spend it.
  for (let i = 0; i < 4; i++) assert.equal(await ask("10.0.0.1", i), Rcode.NOERROR);
  assert.ok(p.costs.credit("10.0.0.1", performance.now()) < 2000, "the replies were charged");
  const deferred = clientCostStats.deferred;
  // Timed from the debt, not from the ask: credit comes back with time, so a slow machine's delay
  // between the two only shortens the wait the ask sees, never the 0.5 s from the debt to the answer.
  const started = performance.now();
  owe(-2500); // half a second of debt
  assert.equal(await ask("10.0.0.1", 10), Rcode.NOERROR);
  assert.equal(clientCostStats.deferred, deferred + 1, "deferred until its credit was back");
  // A lower bound our own wait sets, not a timing of the machine.
  assert.ok(performance.now() - started >= 400, "it waited");
  owe(-10_000); // two seconds of debt: past the wait's bound
  assert.equal(await ask("10.0.0.1", 11), Rcode.REFUSED);
  assert.equal(await ask("10.0.0.2", 12), Rcode.NOERROR, "another client is not held");
});

test("a warm-up runs no plugin of the chain and no finish hook, and leaves no answer stored", async () => {
  const served: string[] = [];
  const p = pipelineWith({
    name: "forward",
    async serve(req) {
      served.push(req.qname);
      return answerA(req.msg, 30);
    },
  });
  const finished: string[] = [];
  p.mux.match("example.org.")!.value.hooks.push((q) => finished.push(q.qname));
  const packets = ["a.example.org.", "b.example.org."].map((n) => encode(newQuery(n, Type.A)));
  assert.equal(quietly(p, packets, 2), 0, "nothing here answers from memory: the chain would have");
  assert.deepEqual(served, []);
  assert.deepEqual(finished, []);
  assert.equal(p.answers.size, 0);
  assert.equal(p.answers.quiet, false, "quiet only while it runs");
  // A client's query afterwards takes the chain and the hooks as ever.
  const reply = await p.handle(packets[0], {
    proto: "udp",
    remoteAddress: "192.0.2.1",
    remotePort: 5353,
    localAddress: "",
    localPort: 53,
  });
  assert.equal(decode(reply!).answer.length, 1);
  assert.deepEqual(served, ["a.example.org."]);
  assert.equal(finished.length, 1);
});
