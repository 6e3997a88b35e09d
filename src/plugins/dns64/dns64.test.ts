import { test } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { StoredAnswer } from "../../answers/policy.ts";
import { setup } from "./setup.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { replyTo } from "../../dns/message.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { Class, Rcode, Type, typeName } from "../../dns/constants.ts";

const V6 = { remoteAddress: "2001:db8::53" };
const SOA = "example. 300 IN SOA ns.example. admin.example. 1 60 60 60 30";

/** A next handler answering from records as text, by "name type"; rcode and policy per type. */
function zone(records: string[], o: { rcode?: Record<string, number>; onServe?: (r: Request) => void } = {}) {
  const calls: string[] = [];
  const next: Handler = {
    name: "zone",
    serve(req) {
      calls.push(typeName(req.qtype));
      o.onServe?.(req);
      const reply = replyTo(req.msg, o.rcode?.[typeName(req.qtype)] ?? Rcode.NOERROR);
      reply.aa = true;
      reply.answer = records
        .map((t) => parseRRText(t))
        .filter((rr) => rr.name === req.qname && (rr.type === req.qtype || rr.type === Type.CNAME));
      if (reply.answer.length === 0) reply.authority = [parseRRText(SOA)];
      req.cache.stable = true;
      return Promise.resolve(reply);
    },
  };
  return { next, calls };
}

async function handler(block: ReturnType<typeof dir>[] = [], args: string[] = [], bind: string[] = []) {
  const f = fakeContext();
  f.ctx.block.bind.push(...bind);
  const plugin = await setup(dir("dns64", args, block.length > 0 ? block : undefined), f.ctx);
  assert.ok(plugin);
  return { plugin, logs: f.logs, familyKeys: f.ctx.block.familyKeys };
}

const texts = (rrs: Parameters<typeof rrToText>[0][]) => rrs.map(rrToText);

test("NODATA for AAAA: the A records under 64:ff9b::/96, TTL the lower of the A's and the SOA's", async () => {
  const { plugin } = await handler();
  const { next, calls } = zone(["www.example. 60 IN A 192.0.2.33", "www.example. 10 IN A 198.51.100.1"]);
  const req = makeRequest("www.example", Type.AAAA, V6);
  const m = await plugin(next).serve(req);
  assert.deepEqual(calls, ["AAAA", "A"]);
  assert.equal(m.rcode, Rcode.NOERROR);
  // SOA TTL 300, MINIMUM 30: the denial is kept 30 s (RFC 2308), so no synthesized record longer.
  assert.deepEqual(texts(m.answer), [
    "www.example.\t30\tIN\tAAAA\t64:ff9b::c000:221",
    "www.example.\t10\tIN\tAAAA\t64:ff9b::c633:6401",
  ]);
  assert.deepEqual(m.question, [{ name: "www.example.", type: Type.AAAA, class: Class.IN }]);
  assert.equal(req.answeredBy, "dns64");
  assert.equal(req.cache.private, false, "the same reply for every IPv6 client");
});

test("an AAAA answer passes as it is; translate_all replaces it with the synthesized one", async () => {
  const records = ["www.example. 60 IN A 192.0.2.1", "www.example. 60 IN AAAA 2001:db8::1"];
  const plain = zone(records);
  const m = await (await handler()).plugin(plain.next).serve(makeRequest("www.example", Type.AAAA, V6));
  assert.deepEqual(texts(m.answer), ["www.example.\t60\tIN\tAAAA\t2001:db8::1"]);
  assert.deepEqual(plain.calls, ["AAAA"]);
  const all = zone(records);
  const { plugin } = await handler([dir("translate_all"), dir("prefix", ["2001:db8:122:344::/64"])]);
  const t = await plugin(all.next).serve(makeRequest("www.example", Type.AAAA, V6));
  // No SOA with a positive answer: 600 s at most (5.1.7).
  assert.deepEqual(texts(t.answer), ["www.example.\t60\tIN\tAAAA\t2001:db8:122:344:c0:2:100:0"]);
});

test("NXDOMAIN passes as it is (5.1.2); SERVFAIL counts as no AAAA; a mapped AAAA is no AAAA (5.1.4)", async () => {
  const { plugin } = await handler();
  const nx = zone([], { rcode: { AAAA: Rcode.NXDOMAIN } });
  assert.equal(
    (await plugin(nx.next).serve(makeRequest("gone.example", Type.AAAA, V6))).rcode,
    Rcode.NXDOMAIN,
  );
  assert.deepEqual(nx.calls, ["AAAA"]);
  const failed = zone(["x.example. 5 IN A 10.0.0.1"], { rcode: { AAAA: Rcode.SERVFAIL } });
  const f = await plugin(failed.next).serve(makeRequest("x.example", Type.AAAA, V6));
  assert.deepEqual(texts(f.answer), ["x.example.\t5\tIN\tAAAA\t64:ff9b::a00:1"]);
  const mapped = zone(["m.example. 5 IN AAAA ::ffff:10.0.0.2", "m.example. 5 IN A 10.0.0.2"]);
  const mm = await plugin(mapped.next).serve(makeRequest("m.example", Type.AAAA, V6));
  assert.deepEqual(texts(mm.answer), ["m.example.\t5\tIN\tAAAA\t64:ff9b::a00:2"]);
});

test("no A either: the AAAA denial as it was; a CNAME chain is kept, its target's A translated", async () => {
  const { plugin } = await handler();
  const none = await plugin(zone([]).next).serve(makeRequest("empty.example", Type.AAAA, V6));
  assert.equal(none.rcode, Rcode.NOERROR);
  assert.deepEqual(texts(none.answer), []);
  assert.deepEqual(texts(none.authority), [rrToText(parseRRText(SOA))]);
  const chain: Handler = {
    name: "chain",
    serve(req) {
      const reply = replyTo(req.msg);
      reply.answer = [parseRRText("alias.example. 60 IN CNAME www.example.")];
      if (req.qtype === Type.A) reply.answer.push(parseRRText("www.example. 60 IN A 192.0.2.33"));
      return Promise.resolve(reply);
    },
  };
  const m = await plugin(chain).serve(makeRequest("alias.example", Type.AAAA, V6));
  assert.deepEqual(texts(m.answer), [
    "alias.example.\t60\tIN\tCNAME\twww.example.",
    "www.example.\t60\tIN\tAAAA\t64:ff9b::c000:221",
  ]);
});

test("RFC 6147 5.5: DO and CD set, the reply as it is; DO alone is translated", async () => {
  const { plugin } = await handler();
  const z = zone(["www.example. 60 IN A 192.0.2.33"]);
  const validating = makeRequest("www.example", Type.AAAA, { ...V6, do: true });
  validating.msg.cd = true;
  assert.deepEqual((await plugin(z.next).serve(validating)).answer, []);
  assert.deepEqual(z.calls, ["AAAA"]);
  const m = await plugin(z.next).serve(makeRequest("www.example", Type.AAAA, { ...V6, do: true }));
  assert.equal(m.answer.length, 1);
});

test("IPv4 clients: no synthesis without allow_ipv4; other types and classes pass untouched", async () => {
  const records = ["www.example. 60 IN A 192.0.2.33"];
  const { plugin } = await handler();
  for (const remoteAddress of ["192.0.2.7", "::ffff:192.0.2.7"]) {
    const z = zone(records);
    const req = makeRequest("www.example", Type.AAAA, { remoteAddress });
    assert.deepEqual((await plugin(z.next).serve(req)).answer, []);
    assert.deepEqual(z.calls, ["AAAA"]);
  }
  const allowed = await handler([dir("allow_ipv4")]);
  const z = zone(records);
  const req = makeRequest("www.example", Type.AAAA, { remoteAddress: "192.0.2.7" });
  assert.equal((await allowed.plugin(z.next).serve(req)).answer.length, 1);
  assert.equal(req.cache.private, false, "every client gets the same reply");
  const other = zone(records);
  await allowed.plugin(other.next).serve(makeRequest("www.example", Type.A, V6));
  await allowed.plugin(other.next).serve(makeRequest("www.example", Type.AAAA, { ...V6, qclass: Class.CH }));
  assert.deepEqual(other.calls, ["A", "AAAA"]);
});

test("the store keys the families apart only where the answer depends on them", async () => {
  assert.equal((await handler()).familyKeys, true, "both families, no allow_ipv4");
  assert.equal((await handler([], [], ["127.0.0.1", "::1"])).familyKeys, true);
  assert.equal((await handler([dir("allow_ipv4")])).familyKeys, undefined);
  assert.equal((await handler([], [], ["::1"])).familyKeys, undefined);
  assert.equal((await handler([], [], ["127.0.0.1"])).familyKeys, undefined);
});

test("a block that listens on IPv6 only keeps its replies; on IPv4 only, dns64 warns and does nothing", async () => {
  const v6 = await handler([], [], ["::1"]);
  const req = makeRequest("www.example", Type.AAAA, V6);
  await v6.plugin(zone(["www.example. 60 IN A 192.0.2.33"]).next).serve(req);
  assert.equal(req.cache.private, false);
  assert.equal(req.cache.stable, true, "both lookups were stable");
  const v4 = await handler([], [], ["127.0.0.1"]);
  assert.match(v4.logs.map((l) => l.msg).join("\n"), /listens on IPv4 only/);
  const z = zone(["www.example. 60 IN A 192.0.2.33"]);
  assert.deepEqual((await v4.plugin(z.next).serve(makeRequest("www.example", Type.AAAA, V6))).answer, []);
  const h = v4.plugin(z.next);
  assert.equal(
    h.lane?.kind === "pass" && h.lane.passes({ qtype: Type.AAAA, qclass: Class.IN } as never),
    true,
  );
  const h6 = v6.plugin(z.next);
  assert.equal(
    h6.lane?.kind === "pass" && h6.lane.passes({ qtype: Type.AAAA, qclass: Class.IN } as never),
    false,
  );
  assert.equal(
    h6.lane?.kind === "pass" && h6.lane.passes({ qtype: Type.A, qclass: Class.IN } as never),
    true,
  );
});

test("the answer store's terms: cache's keep dropped, the A lookup's limits kept, the stored entry hidden", async () => {
  const { plugin } = await handler([], [], ["::1"]);
  const stored = { rcode: 0 } as StoredAnswer;
  const refresh = () => Promise.resolve(undefined);
  const seen: [string, unknown, unknown][] = [];
  const { next } = zone(["www.example. 60 IN A 192.0.2.33"], {
    onServe(r) {
      seen.push([typeName(r.qtype), r.cache.stored, r.cache.refresh]);
      if (r.qtype === Type.AAAA) {
        r.cache.kept = { kind: "denial" } as never;
        r.cache.countedBy = {} as never;
      } else {
        r.cache.limit(1);
        r.cache.outside = true;
      }
    },
  });
  const req = makeRequest("www.example", Type.AAAA, V6);
  req.cache.stored = stored;
  req.cache.refresh = refresh;
  const wrapped: Handler = {
    name: "forward-like",
    async serve(r) {
      const m = await next.serve(r);
      if (r.qtype === Type.A) r.cache.stable = false;
      return m;
    },
  };
  await plugin(wrapped).serve(req);
  assert.deepEqual(seen, [
    ["AAAA", undefined, undefined],
    ["A", undefined, undefined],
  ]);
  assert.equal(req.cache.stored, stored);
  assert.equal(req.cache.refresh, refresh);
  assert.equal(req.cache.kept, undefined, "the synthesized reply is not what cache kept");
  assert.equal(req.cache.countedBy, undefined, "nor are its replays cache misses");
  assert.equal(req.cache.maxAge, 1);
  assert.equal(req.cache.outside, true);
  assert.equal(req.cache.stable, false);
});

test("setup: CoreDNS's forms; bad prefixes, unknown options and a second line refused at their line", async () => {
  await handler([], ["64:1337::/96"]);
  await handler([dir("prefix", ["64:1337::/96"]), dir("translate_all"), dir("allow_ipv4")], ["64:1337::/96"]);
  await assertConfigErrors(setup, [
    [dir("dns64", ["64:ff9b::/33"]), /^Corefile:3 - .*dns64.*must be one of 32, 40, 48, 56, 64, 96/],
    [dir("dns64", ["10.0.0.0/8"]), /not an IPv6 prefix/],
    [dir("dns64", ["64:ff9b::/96", "x"]), /takes 0 to 1 argument/],
    [dir("dns64", [], [dir("upstream", ["8.8.8.8"])]), /unknown property 'upstream'/],
    [dir("dns64", [], [dir("translate_all", ["yes"])]), /takes 0 argument/],
    [dir("dns64", [], [dir("allow_ipv4"), dir("allow_ipv4")]), /'allow_ipv4' is given twice/],
    [
      dir("dns64", ["64:1::/96"], [dir("prefix", ["64:2::/96"])]),
      /64:1::\/96 on the line and 64:2::\/96 here/,
    ],
  ]);
  const f = fakeContext();
  await setup(dir("dns64"), f.ctx);
  await assert.rejects(async () => setup(dir("dns64", [], undefined, 4), f.ctx), /Corefile:4 .*given twice/);
});
