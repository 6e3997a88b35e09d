import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Handler, Request } from "../../plugin.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
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

/** An upstream whose answers the test sets per name; it counts what it was asked. */
function upstream() {
  const answers = new Map<string, (q: Msg) => Msg>();
  const asked: string[] = [];
  let fail: false | "servfail" | "throw" = false;
  const next: Handler = {
    name: "upstream",
    serve(req) {
      asked.push(req.qname);
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
function setup(o: Partial<CacheOptions> = {}) {
  let now = 1_000_000;
  const label = `dns://:${++server}`;
  const cache = new Cache({
    zones: ["."],
    success: { capacity: 100, maxTtl: 3600, minTtl: 5 },
    denial: { capacity: 100, maxTtl: 1800, minTtl: 5 },
    servfailTtl: 5,
    disable: { success: [], denial: [] },
    keepTtl: false,
    now: () => now,
    ...o,
  });
  const up = upstream();
  const h = cache.handler(up.next);
  const ask = async (
    name: string,
    type: number = Type.A,
    ro: Parameters<typeof makeRequest>[2] = {},
    patch: Partial<Msg> = {},
  ) => {
    const base = makeRequest(name, type, ro);
    const req: Request = { ...base, msg: { ...base.msg, ...patch }, server: label };
    const reply = await h.serve(req);
    return { reply, req };
  };
  return {
    cache,
    up,
    ask,
    label,
    stats: () => statsFor(label, o.zones?.join(" ") ?? "."),
    tick: (s: number) => (now += s * 1000),
  };
}

const ttls = (m: Msg) => m.answer.map((rr) => rr.ttl);
/** Lets background refreshes (resolved promises) finish. */
const flush = () => new Promise((r) => setImmediate(r));

describe("cache", () => {
  it("answers a repeated query from the cache, its TTL counting down", async () => {
    const t = setup();
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 300)]);
    const first = await t.ask("www.example.org");
    assert.deepEqual(ttls(first.reply), [300]);
    assert.equal(first.req.maxAge, 1, "the wire cache replays it for a second at most");
    t.tick(10);
    const second = await t.ask("www.example.org");
    assert.deepEqual(ttls(second.reply), [290]);
    assert.deepEqual(second.reply.answer[0].data, { type: Type.A, address: "192.0.2.1" });
    assert.equal(second.req.answeredBy, "cache");
    assert.equal(second.reply.id, 4242, "the query's ID");
    assert.deepEqual(t.up.asked, ["www.example.org."]);
    t.tick(291);
    await t.ask("www.example.org");
    assert.equal(t.up.asked.length, 2, "expired: asked again");
    const s = t.stats();
    assert.deepEqual([s.requests, s.hits.success, s.misses], [3, 1, 2]);
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

  it("gives every record the entry's time left, and echoes the query's ID and question", async () => {
    const t = setup();
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 60)], {
      authority: [{ ...soa(7200, 60), type: Type.NS, data: { type: Type.NS, target: "ns.example.org." } }],
      additional: [a("ns.example.org.", "192.0.2.53", 7200)],
    });
    await t.ask("www.example.org");
    t.tick(15);
    const { reply, req } = await t.ask("www.example.org", Type.A, {}, { id: 777 });
    assert.deepEqual(
      [reply.answer, reply.authority, reply.additional].map((s) => s.map((rr) => rr.ttl)),
      [[45], [45], [45]],
    );
    assert.equal(reply.id, 777);
    assert.deepEqual(reply.question, req.msg.question);
    assert.notEqual(reply.question, req.msg.question, "a copy, not the query's own array");
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
    const priv: Handler = t.cache.handler({
      name: "whoami",
      serve(req) {
        req.private = true;
        return Promise.resolve({ ...replyTo(req.msg), answer: [a(req.qname, "127.0.0.1")] });
      },
    });
    let calls = 0;
    for (let i = 0; i < 2; i++) {
      const req: Request = makeRequest("me.example.org", Type.A);
      await priv.serve(req);
      if (req.answeredBy !== "cache") calls++;
    }
    assert.equal(calls, 2);
    assert.equal(t.up.asked.length, 2);
  });

  it("keeps no zone transfers, no other rcodes, and no replies without a question", async () => {
    const t = setup();
    t.up.answer("example.org.", [soa(3600, 60)]);
    t.up.answer("refused.example.org.", [], { rcode: Rcode.REFUSED });
    t.up.answer("empty.example.org.", [a("empty.example.org.", "192.0.2.1")], { question: [] });
    for (let i = 0; i < 2; i++) {
      await t.ask("example.org", Type.AXFR);
      await t.ask("example.org", Type.IXFR);
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

  it("caps maxAge at one second only for what it answers or keeps, never raising it", async () => {
    const t = setup({ disable: { success: ["cluster.local."], denial: [] } });
    t.up.answer("web.default.svc.cluster.local.", [a("web.default.svc.cluster.local.", "10.96.0.1")]);
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1")]);
    const fresh = await t.ask("web.default.svc.cluster.local");
    assert.equal(fresh.req.maxAge, undefined, "not kept: the next plugin's own maxAge stands");
    assert.equal((await t.ask("www.example.org")).req.maxAge, 1);
    const h = t.cache.handler({
      name: "upstream",
      serve: () => Promise.reject(new Error("not asked on a hit")),
    });
    const req: Request = { ...makeRequest("www.example.org", Type.A), server: "dns://:1", maxAge: 0 };
    await h.serve(req);
    assert.equal(req.answeredBy, "cache");
    assert.equal(req.maxAge, 0);
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

  it("serve_stale immediate: answers at once with TTL 0 and refreshes behind", async () => {
    const t = setup({ serveStale: { durationMs: 60_000, verify: false } });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 10)]);
    await t.ask("www.example.org");
    t.tick(15);
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.2", 10)]);
    const stale = await t.ask("www.example.org");
    assert.equal(stale.req.answeredBy, "cache");
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
      assert.equal(stale.req.answeredBy, "cache");
    }
    assert.deepEqual([t.stats().servedStale, t.up.asked.length], [3, 4], "every stale answer asked first");
    t.up.setFail(false);
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.2", 10)]);
    const fresh = await t.ask("www.example.org");
    assert.deepEqual(fresh.reply.answer[0].data, { type: Type.A, address: "192.0.2.2" });
    assert.equal(fresh.req.maxAge, 1, "kept");
    t.tick(2);
    assert.deepEqual(ttls((await t.ask("www.example.org")).reply), [8], "from the cache again");
    assert.equal(t.up.asked.length, 5);
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

  it("evicts the least recently used entry when full, and counts it", async () => {
    const t = setup({ success: { capacity: 2, maxTtl: 3600, minTtl: 5 } });
    for (const n of ["a", "b", "c"]) {
      t.up.answer(`${n}.example.org.`, [a(`${n}.example.org.`, "192.0.2.1")]);
      await t.ask(`${n}.example.org`);
    }
    assert.equal(t.stats().evictions.success, 1);
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
