import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Handler, Request } from "../../plugin.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { Cache, type CacheOptions } from "./cache.ts";
import { statsFor } from "./stats.ts";

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
  let fail = false;
  const next: Handler = {
    name: "upstream",
    serve(req) {
      asked.push(req.qname);
      if (fail) return Promise.resolve(replyTo(req.msg, Rcode.SERVFAIL));
      const make = answers.get(req.qname);
      return Promise.resolve(
        make ? make(req.msg) : { ...replyTo(req.msg, Rcode.NXDOMAIN), authority: [soa(3600, 60)] },
      );
    },
  };
  const answer = (name: string, rrs: RR[], o: Partial<Msg> = {}) =>
    answers.set(name, (q) => ({ ...replyTo(q, Rcode.NOERROR), answer: rrs, ...o }));
  return { next, asked, answer, setFail: (f: boolean) => (fail = f) };
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
  const ask = async (name: string, type: number = Type.A, ro: Parameters<typeof makeRequest>[2] = {}) => {
    const req: Request = { ...makeRequest(name, type, ro), server: label };
    const reply = await h.serve(req);
    return { reply, req };
  };
  return {
    cache,
    up,
    ask,
    stats: () => statsFor(label, o.zones?.join(" ") ?? "."),
    tick: (s: number) => (now += s * 1000),
  };
}

const ttls = (m: Msg) => m.answer.map((rr) => rr.ttl);

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

  it("keeps the original TTLs with keepttl", async () => {
    const t = setup({ keepTtl: true });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 300)]);
    await t.ask("www.example.org");
    t.tick(100);
    assert.deepEqual(ttls((await t.ask("www.example.org")).reply), [300]);
  });

  it("clamps the kept time to the TTL bounds (cache 30, MINTTL)", async () => {
    const t = setup({ success: { capacity: 100, maxTtl: 30, minTtl: 10 } });
    t.up.answer("long.example.org.", [a("long.example.org.", "192.0.2.1", 3000)]);
    t.up.answer("short.example.org.", [a("short.example.org.", "192.0.2.2", 2)]);
    await t.ask("long.example.org");
    await t.ask("short.example.org");
    t.tick(5);
    assert.deepEqual(ttls((await t.ask("long.example.org")).reply), [25]);
    assert.deepEqual(ttls((await t.ask("short.example.org")).reply), [5], "kept 10 s although it said 2");
    t.tick(26);
    await t.ask("long.example.org");
    assert.equal(t.up.asked.filter((n) => n === "long.example.org.").length, 2);
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

  it("keys on the DO and CD bits, and only caches inside its zones", async () => {
    const t = setup({ zones: ["example.org."] });
    t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1")]);
    t.up.answer("www.example.net.", [a("www.example.net.", "192.0.2.9")]);
    await t.ask("www.example.org");
    await t.ask("www.example.org", Type.A, { do: true });
    await t.ask("www.example.org", Type.A, { do: true });
    await t.ask("www.example.net");
    await t.ask("www.example.net");
    assert.deepEqual(t.up.asked, [
      "www.example.org.",
      "www.example.org.",
      "www.example.net.",
      "www.example.net.",
    ]);
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

  it("keeps SERVFAIL for the servfail duration only", async () => {
    const t = setup({ servfailTtl: 3 });
    t.up.setFail(true);
    await t.ask("down.example.org");
    t.up.setFail(false);
    t.up.answer("down.example.org.", [a("down.example.org.", "192.0.2.5")]);
    assert.equal((await t.ask("down.example.org")).reply.rcode, Rcode.SERVFAIL);
    t.tick(3);
    assert.equal((await t.ask("down.example.org")).reply.rcode, Rcode.NOERROR);
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
    await new Promise((r) => setImmediate(r));
    assert.equal(t.up.asked.length, 2, "fetched again");
    const after = await t.ask("hot.example.org");
    assert.deepEqual(ttls(after.reply), [100], "the refreshed entry");
    assert.deepEqual(after.reply.answer[0].data, { type: Type.A, address: "192.0.2.2" });
    assert.equal(t.stats().prefetch, 1);
  });

  it("serves stale entries while the upstream is away: immediate refreshes behind, verify asks first", async () => {
    for (const verify of [false, true]) {
      const t = setup({ serveStale: { durationMs: 60_000, verify } });
      t.up.answer("www.example.org.", [a("www.example.org.", "192.0.2.1", 10)]);
      await t.ask("www.example.org");
      t.tick(15);
      t.up.setFail(true);
      const stale = await t.ask("www.example.org");
      assert.equal(stale.reply.rcode, Rcode.NOERROR, `verify=${verify}`);
      assert.deepEqual(ttls(stale.reply), [0]);
      assert.equal(t.stats().servedStale, 1);
      t.tick(60);
      assert.equal((await t.ask("www.example.org")).reply.rcode, Rcode.SERVFAIL, "past the stale window");
    }
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
});
