// The cache through the server's pipeline: queries go in as packets and come out as replies, so what is
// tested is what a client sees, fast path (the answer cache replaying what `cache` keeps) and slow path
// (the plugin answering from a stored entry) alike. One clock drives both.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { QueryDone } from "../../metrics/query-done.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { encode } from "../../dns/encode.ts";
import { decode } from "../../dns/decode.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { Pipeline, type Peer } from "../../server/pipeline.ts";
import type { Block } from "../../server/block.ts";
import { makeRequest, type RequestOptions } from "../../../test/helpers/request.ts";
import { Cache, type CacheOptions } from "./cache.ts";
import { statsFor } from "./stats.ts";
import { registry } from "../../metrics/registry.ts";
import { sample } from "../../../test/helpers/metrics.ts";
import "./metrics.ts";

const a = (name: string, ip: string, ttl = 300): RR => ({
  name,
  type: Type.A,
  class: Class.IN,
  ttl,
  data: { type: Type.A, address: ip },
});
const soa = (ttl: number, minimum: number): RR => ({
  name: "example.org.",
  type: Type.SOA,
  class: Class.IN,
  ttl,
  data: { type: Type.SOA, mname: "ns.", rname: "h.", serial: 1, refresh: 1, retry: 1, expire: 1, minimum },
});

/** An upstream whose answers the test sets per name; it counts what it was asked. Its own replies are
 * never replayed by the answer cache (maxAge 0), so whatever is replayed is what `cache` kept. */
function upstream() {
  const answers = new Map<string, (q: Msg) => Msg>();
  const asked: string[] = [];
  let fail: false | "servfail" | "throw" = false;
  const next: Handler = {
    name: "upstream",
    serve(req) {
      asked.push(req.qname);
      req.answeredBy = "upstream";
      req.cache.limit(0);
      if (fail === "throw") return Promise.reject(new Error("upstream down"));
      if (fail) return Promise.resolve(replyTo(req.msg, Rcode.SERVFAIL));
      const make = answers.get(req.qname);
      return Promise.resolve(
        make ? make(req.msg) : { ...replyTo(req.msg, Rcode.NXDOMAIN), authority: [soa(3600, 60)] },
      );
    },
  };
  const answer = (name: string, rrs: RR[], o: Partial<Msg> = {}) =>
    answers.set(name, (q) => ({ ...replyTo(q, Rcode.NOERROR), answer: rrs, ...o }));
  const setFail = (f: boolean | "throw") => (fail = f === true ? "servfail" : f);
  return { next, asked, answer, setFail };
}

let server = 0;
function setup(o: Partial<CacheOptions> = {}, inner?: Handler) {
  let now = 1_000_000;
  const clock = () => now;
  const label = `dns://:${++server}`;
  const cache = new Cache({
    zones: ["."],
    success: { capacity: 100, maxTtl: 3600, minTtl: 5 },
    denial: { capacity: 100, maxTtl: 1800, minTtl: 5 },
    servfailTtl: 5,
    disable: { success: [], denial: [] },
    keepTtl: false,
    now: clock,
    ...o,
  });
  const up = upstream();
  const pipeline = new Pipeline(label, pino({ level: "silent" }), undefined, clock);
  let done: QueryDone | undefined;
  const block: Block = {
    keys: [],
    zones: ["."],
    chain: cache.handler(inner ?? up.next),
    hooks: [(q) => (done = { ...q, qname: q.qname, rflags: q.rflags })],
    bind: [],
    directives: ["cache"],
    shared: new Map(),
  };
  pipeline.mux.add(".", block);
  /** Asks as a client: `patch` sets header fields of the query (id, cd). */
  const ask = async (
    name: string,
    type: number = Type.A,
    ro: RequestOptions = {},
    patch: Partial<Msg> = {},
  ) => {
    const query = { ...makeRequest(name, type, ro).msg, ...patch };
    const peer: Peer = {
      proto: ro.proto ?? "udp",
      remoteAddress: "127.0.0.1",
      remotePort: 40000,
      localAddress: "127.0.0.1",
      localPort: 53,
    };
    const out = await pipeline.handle(encode(query), peer);
    assert.ok(out, "a reply");
    return { reply: decode(out), done: done!, query };
  };
  return {
    cache,
    up,
    ask,
    pipeline,
    label,
    stats: () => statsFor(label, o.zones?.join(" ") ?? "."),
    tick: (s: number) => (now += s * 1000),
  };
}

const ttls = (m: Msg) => m.answer.map((rr) => rr.ttl);
/** Lets background refreshes (resolved promises) finish. */
const flush = () => new Promise((r) => setImmediate(r));

describe("cache", () => {
  it("does not keep a forwarded reply over 16 KiB: replayed for a second, then asked again", async () => {
    let outsideAsks = 0;
    const up = upstream();
    // As forward marks its replies: from outside the server, replayable for a second.
    const forward: Handler = {
      name: "forward",
      serve(req) {
        outsideAsks++;
        const reply = up.next.serve(req);
        req.cache.maxAge = 1;
        req.cache.outside = true;
        return reply;
      },
    };
    const t = setup({}, forward);
    const many = Array.from({ length: 1500 }, (_, i) => a("big.example.org.", `10.0.${i >> 8}.${i & 255}`));
    up.answer("big.example.org.", many);
    up.answer("small.example.org.", [a("small.example.org.", "192.0.2.1")]);
    for (const name of ["big.example.org", "small.example.org"]) {
      assert.equal(
        (await t.ask(name, Type.A, { proto: "tcp" })).reply.answer.length,
        name.startsWith("big") ? 1500 : 1,
      );
    }
    const asked = outsideAsks;
    await t.ask("big.example.org", Type.A, { proto: "tcp" });
    assert.equal(outsideAsks, asked, "replayed within its second (a TCP retry)");
    t.tick(2);
    await t.ask("small.example.org", Type.A, { proto: "tcp" });
    assert.equal(outsideAsks, asked, "a small reply is kept for its TTL");
    const again = await t.ask("big.example.org", Type.A, { proto: "tcp" });
    assert.equal(outsideAsks, asked + 1, "the big one was not kept");
    assert.equal(again.reply.answer.length, 1500);
  });

  it("answers a repeated query from the cache, its TTL counting down on the fast path", async () => {
    const t = setup();
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 300)]);
    const first = await t.ask("www.example.org");
    assert.deepEqual(ttls(first.reply), [300]);
    assert.deepEqual([first.done.cached, first.done.plugin], [false, "upstream"]);
    t.tick(10);
    const second = await t.ask("www.example.org");
    assert.deepEqual(ttls(second.reply), [290]);
    assert.deepEqual(second.reply.answer[0].data, { type: Type.A, address: "192.0.2.1" });
    assert.deepEqual([second.done.cached, second.done.plugin], [true, "cache"], "replayed as the cache's");
    assert.equal(second.reply.id, 4242, "the query's ID");
    t.tick(0.5);
    assert.deepEqual(ttls((await t.ask("www.example.org")).reply), [290], "whole seconds, as CoreDNS");
    assert.deepEqual(t.up.asked, ["www.example.org."]);
    t.tick(290);
    await t.ask("www.example.org");
    assert.equal(t.up.asked.length, 2, "expired: asked again");
    const s = t.stats();
    assert.deepEqual([s.requests, s.hits.success, s.misses], [4, 2, 2]);
  });

  it("answers with the entry's whole TTL with keepttl, and still expires it on time", async () => {
    const t = setup({ keepTtl: true, success: { capacity: 100, maxTtl: 30, minTtl: 5 } });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 300)]);
    await t.ask("www.example.org");
    t.tick(20);
    assert.deepEqual(ttls((await t.ask("www.example.org")).reply), [30], "the kept TTL, not 300 or 10");
    t.tick(10);
    await t.ask("www.example.org");
    assert.equal(t.up.asked.length, 2);
  });

  it("gives every record the entry's time left (not OPT), and echoes the query's ID and question", async () => {
    const t = setup();
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 60)], {
      authority: [{ ...soa(7200, 60), type: Type.NS, data: { type: Type.NS, target: "ns.example.org." } }],
      additional: [a("ns.example.org.", "192.0.2.53", 7200)],
    });
    await t.ask("www.example.org", Type.A, { edns: true });
    t.tick(15);
    const question = [{ name: "WwW.example.ORG.", type: Type.A, class: Class.IN }];
    const { reply } = await t.ask("www.example.org", Type.A, { edns: true }, { id: 777, question });
    assert.deepEqual(
      [reply.answer, reply.authority, reply.additional].map((s) => s.map((rr) => rr.ttl)),
      [[45], [45], [45]],
    );
    assert.deepEqual(reply.edns, { udpSize: 1232, version: 0, do: false, options: [] }, "OPT untouched");
    assert.equal(reply.id, 777);
    assert.equal(reply.question[0].name, "WwW.example.ORG.", "the client's spelling");
    assert.equal(reply.qr, true);
  });

  it("clamps the kept time to the TTL bounds (cache 30, MINTTL)", async () => {
    const t = setup({ success: { capacity: 100, maxTtl: 30, minTtl: 10 } });
    const long = a("long.example.org.", "192.0.2.1", 3000);
    t.up.answer("long.example.org.", [long]);
    t.up.answer("short.example.org.", [a("short.example.org.", "192.0.2.2", 2)]);
    // The reply that fills the cache already carries the kept TTL, so the next hit is no jump down.
    assert.deepEqual(ttls((await t.ask("long.example.org")).reply), [30]);
    assert.deepEqual(ttls((await t.ask("short.example.org")).reply), [10]);
    assert.equal(long.ttl, 3000, "the next plugin's record is left alone");
    t.tick(5);
    assert.deepEqual(ttls((await t.ask("long.example.org")).reply), [25]);
    assert.deepEqual(ttls((await t.ask("short.example.org")).reply), [5], "kept 10 s although it said 2");
    t.tick(26);
    await t.ask("long.example.org");
    assert.equal(t.up.asked.filter((n) => n === "long.example.org.").length, 2);

    const capped = setup({ success: { capacity: 100, maxTtl: 3, minTtl: 5 } }); // `cache 3`
    capped.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 60)]);
    await capped.ask("www.example.org");
    capped.tick(1);
    assert.deepEqual(ttls((await capped.ask("www.example.org")).reply), [2], "the maximum wins over MINTTL");
  });

  it("keeps denials for the SOA's negative TTL (RFC 2308), NODATA and NXDOMAIN alike", async () => {
    const t = setup();
    t.up.answer("nodata.example.org.", [], { authority: [soa(30, 120)] });
    const nx = await t.ask("nx.example.org"); // NXDOMAIN, SOA TTL 3600 MINIMUM 60 -> 60 s
    assert.equal(nx.reply.rcode, Rcode.NXDOMAIN);
    await t.ask("nodata.example.org"); // min(30, 120) = 30 s
    t.tick(29);
    const again = await t.ask("nx.example.org");
    assert.equal(again.reply.rcode, Rcode.NXDOMAIN);
    assert.equal(again.reply.authority[0].ttl, 31);
    assert.equal((await t.ask("nodata.example.org")).reply.authority[0].ttl, 1);
    t.tick(2);
    await t.ask("nodata.example.org");
    assert.deepEqual(t.up.asked, ["nx.example.org.", "nodata.example.org.", "nodata.example.org."]);
    assert.equal(t.stats().hits.denial, 2);
  });

  it("stores nothing for disabled zones: kubeadm's `disable success cluster.local`", async () => {
    const t = setup({ disable: { success: ["cluster.local."], denial: ["cluster.local."] } });
    t.up.answer("web.default.svc.cluster.local.", [a("web.default.svc.cluster.local.", "10.96.0.1", 5)]);
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1")]);
    for (let i = 0; i < 2; i++) {
      await t.ask("web.default.svc.cluster.local");
      await t.ask("nope.default.svc.cluster.local");
      await t.ask("www.example.org");
    }
    assert.deepEqual(t.up.asked, [
      "web.default.svc.cluster.local.",
      "nope.default.svc.cluster.local.",
      "www.example.org.",
      "web.default.svc.cluster.local.",
      "nope.default.svc.cluster.local.",
    ]);
  });

  it("counts a request and a miss for a reply it looked at but did not keep, also on the fast path", async () => {
    const stable: Handler = {
      name: "kubernetes",
      serve(req) {
        req.cache.stable = true;
        return Promise.resolve({ ...replyTo(req.msg), answer: [a(req.qname, "10.96.0.1", 5)] });
      },
    };
    const t = setup({ disable: { success: ["cluster.local."], denial: [] } }, stable);
    for (let i = 0; i < 3; i++) await t.ask("web.default.svc.cluster.local");
    const last = await t.ask("web.default.svc.cluster.local");
    assert.deepEqual([last.done.cached, last.done.plugin], [true, ""], "the answer cache replays it");
    const s = t.stats();
    assert.deepEqual([s.requests, s.misses, s.hits.success], [4, 4, 0], "as CoreDNS counts a disabled name");
  });

  it("keys on name, type, DO and CD bits, and only caches inside its zones", async () => {
    const t = setup({ zones: ["example.org."] });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1")]);
    t.up.answer("www.example.net.", [a("www.example.net.", "192.0.2.9")]);
    for (let i = 0; i < 2; i++) {
      await t.ask("www.example.org");
      await t.ask("WWW.Example.ORG"); // the same key: names are canonical
      await t.ask("www.example.org", Type.A, { do: true });
      await t.ask("www.example.org", Type.A, {}, { cd: true });
      await t.ask("www.example.org", Type.A, { do: true }, { cd: true });
      await t.ask("www.example.org", Type.AAAA);
      await t.ask("www.example.net");
    }
    assert.equal(t.up.asked.filter((n) => n === "www.example.org.").length, 5, "five keys, each asked once");
    assert.equal(t.up.asked.filter((n) => n === "www.example.net.").length, 2, "outside the zones");
    const s = t.stats();
    assert.deepEqual([s.requests, s.misses, s.hits.success, s.hits.denial], [12, 5, 7, 0]);
  });

  it("does not keep truncated replies or answers that depend on who asked", async () => {
    const t = setup();
    t.up.answer("big.example.org.", [a("big.example.org.", "192.0.2.1")], { tc: true });
    await t.ask("big.example.org");
    await t.ask("big.example.org");
    assert.equal(t.up.asked.length, 2);
    let calls = 0;
    const whoami: Handler = {
      name: "whoami",
      serve(req) {
        calls++;
        req.cache.private = true;
        return Promise.resolve({ ...replyTo(req.msg), answer: [a(req.qname, "127.0.0.1")] });
      },
    };
    const w = setup({}, whoami);
    await w.ask("me.example.org");
    await w.ask("me.example.org");
    assert.equal(calls, 2);
  });

  it("keeps no zone transfers, no other rcodes, and no replies without a question", async () => {
    const t = setup();
    t.up.answer("example.org.", [soa(3600, 60)]);
    t.up.answer("refused.example.org.", [], { rcode: Rcode.REFUSED });
    t.up.answer("empty.example.org.", [a("empty.example.org.", "192.0.2.1")], { question: [] });
    for (let i = 0; i < 2; i++) {
      await t.ask("example.org", Type.AXFR, { proto: "tcp" });
      await t.ask("example.org", Type.IXFR, { proto: "tcp" });
      await t.ask("refused.example.org");
      await t.ask("empty.example.org");
    }
    assert.equal(t.up.asked.length, 8);
    assert.equal(t.stats().requests, 4, "zone transfers pass by without being looked at");
  });

  it("keeps referrals as successes and denials without an SOA for MINTTL", async () => {
    const t = setup();
    const ns = { ...a("sub.example.org.", ""), type: Type.NS, data: { type: Type.NS, target: "ns.sub." } };
    t.up.answer("www.sub.example.org.", [], { authority: [{ ...ns, ttl: 600 }] });
    t.up.answer("bare.example.org.", [], { authority: [] }); // NODATA with no SOA
    await t.ask("www.sub.example.org");
    await t.ask("bare.example.org");
    t.tick(4);
    const ref = await t.ask("www.sub.example.org");
    assert.equal(ref.reply.authority[0].ttl, 596);
    assert.equal((await t.ask("bare.example.org")).reply.answer.length, 0);
    t.tick(1);
    await t.ask("bare.example.org");
    assert.deepEqual(t.up.asked, ["www.sub.example.org.", "bare.example.org.", "bare.example.org."]);
    const s = t.stats();
    assert.deepEqual([s.hits.success, s.hits.denial], [1, 1]);
  });

  it("what it keeps, it ages itself: the next plugins' replay bounds are lifted, others stand", async () => {
    const t = setup({ disable: { success: ["cluster.local."], denial: [] } });
    const next: Handler = {
      name: "forward",
      serve(req) {
        req.cache.limit(1); // forward's: its answers' TTLs count down upstream
        return Promise.resolve({ ...replyTo(req.msg), answer: [a(req.qname, "192.0.2.1")] });
      },
    };
    const h = t.cache.handler(next);
    const kept = { ...makeRequest("www.example.org", Type.A), server: t.label };
    await h.serve(kept);
    assert.deepEqual([kept.cache.maxAge, kept.cache.kept?.ttl], [Infinity, 300]);
    const notKept = { ...makeRequest("web.default.svc.cluster.local", Type.A), server: t.label };
    await h.serve(notKept);
    assert.deepEqual([notKept.cache.maxAge, notKept.cache.kept], [1, undefined]);
  });

  it("keeps SERVFAIL for the servfail duration only", async () => {
    const t = setup({ servfailTtl: 3 });
    t.up.setFail(true);
    await t.ask("down.example.org");
    t.up.setFail(false);
    t.up.answer("down.example.org.", [a("down.example.org.", "192.0.2.5", 5)]);
    assert.equal((await t.ask("down.example.org")).reply.rcode, Rcode.SERVFAIL);
    t.tick(3);
    assert.equal((await t.ask("down.example.org")).reply.rcode, Rcode.NOERROR);
    t.up.setFail(true);
    t.tick(10);
    await t.ask("down.example.org"); // the success expired: asked again, SERVFAIL kept
    assert.equal((await t.ask("down.example.org")).reply.rcode, Rcode.SERVFAIL);
    assert.equal(t.up.asked.length, 3);
    const none = setup({ servfailTtl: 0 });
    none.up.setFail(true);
    await none.ask("x.example.org");
    await none.ask("x.example.org");
    assert.equal(none.up.asked.length, 2);
  });

  it("answers a client too small for the stored reply from the entry, fitted on the fast path", async () => {
    const t = setup();
    const many = Array.from({ length: 40 }, (_, i) => a("many.example.org.", `192.0.2.${i + 1}`, 60));
    t.up.answer("many.example.org.", many);
    const tcp = await t.ask("many.example.org", Type.A, { proto: "tcp" });
    assert.equal(tcp.reply.answer.length, 40);
    t.tick(10);
    const udp = await t.ask("many.example.org"); // no EDNS: 512 octets at most
    assert.equal(udp.reply.tc, true);
    assert.deepEqual([udp.done.cached, udp.done.plugin, udp.done.rflags], [true, "cache", "qr,tc,rd"]);
    assert.equal(udp.reply.answer.length, 29, "as many whole records as 512 octets hold (RFC 2181 9)");
    assert.ok(
      udp.reply.answer.every((rr) => rr.ttl === 50),
      "the time left",
    );
    const again = await t.ask("many.example.org", Type.A, { proto: "tcp" });
    assert.deepEqual([again.done.cached, again.reply.answer.length], [true, 40], "the entry stays");
    assert.deepEqual(t.up.asked, ["many.example.org."]);
  });

  it("an invalidated name is asked again at once, whatever time it had left", async () => {
    const t = setup();
    t.up.answer("web.default.svc.cluster.local.", [a("web.default.svc.cluster.local.", "10.96.0.1", 30)]);
    await t.ask("web.default.svc.cluster.local");
    await t.ask("web.default.svc.cluster.local");
    t.up.answer("web.default.svc.cluster.local.", [a("web.default.svc.cluster.local.", "10.96.0.2", 30)]);
    t.pipeline.answers.invalidateNames(["web.default.svc.cluster.local."]);
    const after = await t.ask("web.default.svc.cluster.local");
    assert.deepEqual(after.reply.answer[0].data, { type: Type.A, address: "10.96.0.2" });
    assert.equal(t.up.asked.length, 2);
  });

  it("prefetches a popular entry near its end, in the background", async () => {
    const t = setup({ prefetch: { amount: 3, durationMs: 120_000, percentage: 10 } });
    t.up.answer("hot.example.org.", [a("hot.example.org.", "192.0.2.1", 100)]);
    await t.ask("hot.example.org");
    for (let i = 0; i < 3; i++) await t.ask("hot.example.org"); // popular, but far from the end
    assert.equal(t.up.asked.length, 1);
    t.tick(91); // 9 s left: under 10% of 100
    t.up.answer("hot.example.org.", [a("hot.example.org.", "192.0.2.2", 100)]);
    const hit = await t.ask("hot.example.org");
    assert.deepEqual(ttls(hit.reply), [9], "the client still gets the cached answer");
    await flush();
    assert.equal(t.up.asked.length, 2, "fetched again");
    const after = await t.ask("hot.example.org");
    assert.deepEqual(ttls(after.reply), [100], "the refreshed entry");
    assert.deepEqual(after.reply.answer[0].data, { type: Type.A, address: "192.0.2.2" });
    assert.equal(after.done.cached, true, "served by the fast path again");
    assert.equal(t.stats().prefetch, 1);
  });

  it("prefetches only what is popular: AMOUNT hits with no gap of DURATION", async () => {
    const t = setup({ prefetch: { amount: 3, durationMs: 10_000, percentage: 20 } });
    t.up.answer("hot.example.org.", [a("hot.example.org.", "192.0.2.1", 100)]);
    await t.ask("hot.example.org"); // miss: stored, no hit yet
    t.tick(70);
    await t.ask("hot.example.org"); // hit 1
    t.tick(11);
    await t.ask("hot.example.org"); // a gap of 11 s: hit 1 again
    await t.ask("hot.example.org"); // hit 2, 19 s left (under 20%): not popular enough
    await flush();
    assert.equal(t.up.asked.length, 1);
    await t.ask("hot.example.org"); // hit 3: prefetch
    await t.ask("hot.example.org"); // already refreshing: no second one
    await flush();
    assert.equal(t.up.asked.length, 2);
    assert.equal(t.stats().prefetch, 1);
    // Asked every 9 s, the refreshed entry is prefetched again near its own end.
    for (let i = 0; i < 9; i++) {
      t.tick(9);
      await t.ask("hot.example.org");
      await flush();
      assert.equal(t.up.asked.length, i < 8 ? 2 : 3, `at ${i}`);
    }
    assert.equal(t.stats().prefetch, 2);
  });

  it("keeps the entry when a prefetch fails, and counts the failure", async () => {
    const t = setup({ prefetch: { amount: 1, durationMs: 60_000, percentage: 10 } });
    t.up.answer("hot.example.org.", [a("hot.example.org.", "192.0.2.1", 100)]);
    await t.ask("hot.example.org");
    t.tick(95);
    for (const mode of [true, "throw"] as const) {
      t.up.setFail(mode);
      const hit = await t.ask("hot.example.org");
      assert.deepEqual(ttls(hit.reply), [5]);
      await flush();
    }
    assert.equal(t.up.asked.length, 3);
    assert.deepEqual([t.stats().prefetch, t.stats().refreshFailures], [2, 2]);
    assert.equal((await t.ask("hot.example.org")).reply.rcode, Rcode.NOERROR, "still the old answer");
  });

  it("a refresh that straddles a change of its name is not stored", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: false } });
    t.up.answer("web.default.svc.cluster.local.", [a("web.default.svc.cluster.local.", "10.96.0.1", 10)]);
    await t.ask("web.default.svc.cluster.local");
    t.tick(15);
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const slow = t.up.next.serve.bind(t.up.next);
    t.up.next.serve = async (req: Request) => {
      await held;
      return slow(req);
    };
    assert.deepEqual(ttls((await t.ask("web.default.svc.cluster.local")).reply), [0], "stale, refreshing");
    t.pipeline.answers.invalidateNames(["web.default.svc.cluster.local."]);
    release();
    await flush();
    assert.equal(t.pipeline.answers.size, 0, "the refresh started before the change and is not kept");
  });

  it("serve_stale immediate: answers at once with TTL 0 and refreshes behind", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: false } });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 10)]);
    await t.ask("www.example.org");
    t.tick(15);
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.2", 10)]);
    const stale = await t.ask("www.example.org");
    assert.equal(stale.done.plugin, "cache");
    assert.deepEqual(ttls(stale.reply), [0]);
    assert.deepEqual(stale.reply.answer[0].data, { type: Type.A, address: "192.0.2.1" }, "the old one");
    await flush();
    const fresh = await t.ask("www.example.org");
    assert.deepEqual(fresh.reply.answer[0].data, { type: Type.A, address: "192.0.2.2" }, "refreshed");
    assert.deepEqual(ttls(fresh.reply), [10]);
    assert.deepEqual([t.stats().servedStale, t.up.asked.length], [1, 2]);

    t.tick(15);
    t.up.setFail(true);
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(ttls((await t.ask("www.example.org")).reply), [0]);
      await flush();
    }
    assert.equal(t.stats().refreshFailures, 2);
    t.tick(61);
    assert.equal((await t.ask("www.example.org")).reply.rcode, Rcode.SERVFAIL, "past the stale window");
  });

  it("serve_stale verify: asks first, and serves stale only when that fails", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: true } });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 10)]);
    await t.ask("www.example.org");
    t.tick(15);
    for (const mode of [true, "throw", true] as const) {
      t.up.setFail(mode);
      const stale = await t.ask("www.example.org");
      assert.equal(stale.reply.rcode, Rcode.NOERROR, `upstream ${String(mode)}`);
      assert.deepEqual(ttls(stale.reply), [0]);
      assert.equal(stale.done.plugin, "cache");
    }
    assert.deepEqual([t.stats().servedStale, t.up.asked.length], [3, 4], "every stale answer asked first");
    t.up.setFail(false);
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.2", 10)]);
    const fresh = await t.ask("www.example.org");
    assert.deepEqual(fresh.reply.answer[0].data, { type: Type.A, address: "192.0.2.2" });
    t.tick(2);
    const hit = await t.ask("www.example.org");
    assert.deepEqual([ttls(hit.reply), hit.done.cached], [[8], true], "from the cache again");
    assert.equal(t.up.asked.length, 5);
  });

  it("serve_stale_policy prefer_positive: a stale answer outlives an upstream that turned negative", async () => {
    for (const verify of [true, false]) {
      const t = setup({ serveStale: { durationMs: 60_000, verify, preferPositive: true } });
      t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 10)]);
      await t.ask("www.example.org");
      t.tick(15);
      t.up.answer("www.example.org.", [], { rcode: Rcode.NXDOMAIN, authority: [soa(3600, 60)] });
      for (let i = 0; i < 3; i++) {
        const r = await t.ask("www.example.org");
        assert.equal(r.reply.rcode, Rcode.NOERROR, `verify=${verify}, query ${i}`);
        assert.deepEqual(r.reply.answer[0]?.data, { type: Type.A, address: "192.0.2.1" });
        assert.deepEqual(ttls(r.reply), [0]);
        await flush();
      }
      assert.ok(t.up.asked.length >= 2, "the upstream is still asked");
      t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.2", 10)]);
      await t.ask("www.example.org");
      await flush();
      const fresh = await t.ask("www.example.org");
      assert.deepEqual(
        fresh.reply.answer[0].data,
        { type: Type.A, address: "192.0.2.2" },
        "a new answer wins",
      );
      t.tick(11);
      t.up.answer("www.example.org.", [], { rcode: Rcode.NXDOMAIN, authority: [soa(3600, 60)] });
      await t.ask("www.example.org");
      await flush();
      t.tick(61);
      assert.equal((await t.ask("www.example.org")).reply.rcode, Rcode.NXDOMAIN, "past the stale window");
    }
  });

  it("serve_stale without prefer_positive: the upstream's NXDOMAIN replaces the stale answer", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: true } });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 10)]);
    await t.ask("www.example.org");
    t.tick(15);
    t.up.answer("www.example.org.", [], { rcode: Rcode.NXDOMAIN, authority: [soa(3600, 60)] });
    assert.equal((await t.ask("www.example.org")).reply.rcode, Rcode.NXDOMAIN);
  });

  it("prefer_positive keeps only an answer that answers: a CNAME chain to the type asked counts", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: true, preferPositive: true } });
    const cname: RR = {
      name: "alias.example.org.",
      type: Type.CNAME,
      class: Class.IN,
      ttl: 10,
      data: { type: Type.CNAME, target: "www.example.org." },
    };
    t.up.answer("alias.example.org.", [cname, a("www.example.org.", "192.0.2.1", 10)]);
    t.up.answer("dangling.example.org.", [{ ...cname, name: "dangling.example.org." }]);
    await t.ask("alias.example.org");
    await t.ask("dangling.example.org");
    t.tick(15);
    t.up.answer("alias.example.org.", [], { rcode: Rcode.NXDOMAIN, authority: [soa(3600, 60)] });
    t.up.answer("dangling.example.org.", [], { rcode: Rcode.NXDOMAIN, authority: [soa(3600, 60)] });
    assert.equal((await t.ask("alias.example.org")).reply.rcode, Rcode.NOERROR, "the chain reaches an A");
    assert.equal(
      (await t.ask("dangling.example.org")).reply.rcode,
      Rcode.NXDOMAIN,
      "a CNAME that never reaches an A answered nothing to keep",
    );
  });

  it("never serves a kept SERVFAIL stale", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: false } });
    t.up.setFail(true);
    await t.ask("down.example.org");
    t.tick(6);
    t.up.setFail(false);
    t.up.answer("down.example.org.", [a("down.example.org.", "192.0.2.1")]);
    assert.equal((await t.ask("down.example.org")).reply.rcode, Rcode.NOERROR);
    assert.equal(t.stats().servedStale, 0);
  });

  it("evicts the entry stored longest ago when full, and counts it", async () => {
    const t = setup({ success: { capacity: 2, maxTtl: 3600, minTtl: 5 } });
    for (const n of ["a", "b", "c"]) {
      t.up.answer(`${n}.example.org.`, [a(`${n}.example.org.`, "192.0.2.1")]);
      await t.ask(`${n}.example.org`);
    }
    assert.equal(t.stats().evictions.success, 1);
    assert.equal(t.pipeline.answers.size, 2, "gone from the answer cache too");
    await t.ask("a.example.org");
    assert.equal(t.up.asked.length, 4, "a was evicted");
  });

  it("shows its numbers as CoreDNS's coredns_cache_* series; a stopped cache drops its entries", async () => {
    const t = setup({ zones: ["example.org."], denial: { capacity: 1, maxTtl: 1800, minTtl: 5 } });
    t.cache.start();
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1")]);
    await t.ask("www.example.org");
    await t.ask("www.example.org");
    await t.ask("nx1.example.org");
    await t.ask("nx2.example.org"); // evicts nx1 from the one-entry denial cache
    await t.ask("nx2.example.org");
    const server = t.label;
    const base = { server, zones: "example.org.", view: "" };
    const text = await registry.metrics();
    const want: [string, Record<string, string>, number][] = [
      ["coredns_cache_requests_total", base, 5],
      ["coredns_cache_misses_total", base, 3],
      ["coredns_cache_hits_total", { ...base, type: "success" }, 1],
      ["coredns_cache_hits_total", { ...base, type: "denial" }, 1],
      ["coredns_cache_evictions_total", { ...base, type: "denial" }, 1],
      ["coredns_cache_evictions_total", { ...base, type: "success" }, 0],
      ["coredns_cache_prefetch_total", base, 0],
      ["coredns_cache_served_stale_total", base, 0],
      ["coredns_cache_entries", { ...base, type: "success" }, 1],
      ["coredns_cache_entries", { ...base, type: "denial" }, 1],
    ];
    for (const [name, labels, value] of want) assert.equal(sample(text, name, labels), value, name);
    t.cache.stop();
    const after = await registry.metrics();
    assert.equal(sample(after, "coredns_cache_entries", { ...base, type: "success" }), undefined);
    assert.equal(sample(after, "coredns_cache_requests_total", base), 5, "counters outlive a reload");
  });
});
