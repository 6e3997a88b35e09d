import { test } from "node:test";
import assert from "node:assert/strict";
import { fitReply, FitError } from "./fit.ts";
import { encode } from "./encode.ts";
import { decode } from "./decode.ts";
import type { Edns, Msg, RData, RR } from "./message.ts";
import { Rcode, Type } from "./constants.ts";
import { parseRRText } from "./text.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { rng } from "../../test/helpers/rng.ts";

const EDNS: Edns = { udpSize: 1232, version: 0, do: false, options: [] };
const NAME = "many.default.svc.cluster.local.";

function reply(qname: string, qtype: number, over: Partial<Msg> = {}): Msg {
  return queryMsg(qname, qtype, { id: 0x4242, qr: true, aa: true, ...over });
}

function rr(name: string, data: RData, ttl = 5): RR {
  return { name, type: data.type, class: 1, ttl, data };
}

function addresses(n: number, name = NAME): RR[] {
  return Array.from({ length: n }, (_, i) =>
    rr(name, { type: Type.A, address: `10.244.${i >> 8}.${i & 255}` }),
  );
}

/** An RRSIG's rdata: only its first two octets (the type covered) matter here. */
function rrsig(name: string, covered: number): RR {
  const raw = new Uint8Array(60);
  raw[1] = covered;
  return rr(name, { type: 46, raw });
}

const SOA = parseRRText(
  "cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5",
);

function fit(m: Msg, max: number): { out: Buffer; d: Msg; full: Buffer } {
  const full = encode(m);
  const out = fitReply(full, 12 + m.question[0].name.length + 1 + 4, max);
  assert.ok(out.length <= Math.max(max, 512), `${out.length} octets for ${max}`);
  return { out, d: decode(out), full };
}

test("a reply that fits comes back as the same buffer", () => {
  const full = encode(reply(NAME, Type.A, { answer: addresses(3), edns: EDNS }));
  assert.equal(fitReply(full, 12 + NAME.length + 5, 512), full);
  assert.equal(fitReply(full, 12 + NAME.length + 5, full.length), full);
});

test("100 A records in 512 octets: as many as fit, TC=1 (what a client without TCP can use)", () => {
  const m = reply(NAME, Type.A, { answer: addresses(100) });
  const { out, d } = fit(m, 512);
  // Header 12, question 36, then 16 octets per compressed A record.
  const fits = Math.floor((512 - 12 - (NAME.length + 5)) / 16);
  assert.equal(fits, 29);
  assert.equal(d.tc, true);
  assert.deepEqual(d.answer, m.answer.slice(0, fits));
  assert.deepEqual(d.question, m.question);
  assert.equal(out.readUInt16BE(6), fits);
  assert.equal(d.rcode, Rcode.NOERROR);
  assert.equal(d.aa, true);
});

test("the OPT record is kept, last, and takes its 11 octets from the answer", () => {
  const m = reply(NAME, Type.A, { answer: addresses(100), edns: { ...EDNS, do: true } });
  for (const max of [512, 1232]) {
    const { d, out } = fit(m, max);
    assert.equal(d.tc, true);
    assert.deepEqual(d.edns, { ...EDNS, do: true });
    assert.equal(d.answer.length, Math.floor((max - 12 - (NAME.length + 5) - 11) / 16));
    assert.equal(out.readUInt16BE(10), 1);
  }
  // An extended rcode lives in the OPT record and survives.
  const badvers = fit({ ...m, rcode: Rcode.BADVERS }, 512).d;
  assert.equal(badvers.rcode, Rcode.BADVERS);
});

test("SRV with glue: the answer fits and only glue does not, so TC stays clear (RFC 2181 9)", () => {
  const owner = "_http._tcp.nine.default.svc.cluster.local.";
  const targets = Array.from({ length: 9 }, (_, i) => `nine-${i}.nine.default.svc.cluster.local.`);
  const answer = targets.map((t) =>
    rr(owner, { type: Type.SRV, priority: 0, weight: 11, port: 80, target: t }),
  );
  const glue = targets.map((t, i) => rr(t, { type: Type.A, address: `10.244.1.${i}` }));
  const m = reply(owner, Type.SRV, { answer, additional: glue, edns: EDNS });
  const full = encode(m);
  const withoutGlue = encode({ ...m, additional: [] }).length;
  assert.ok(withoutGlue < 650 && full.length > 650, `${withoutGlue} and ${full.length}`);
  const { d } = fit(m, 650);
  assert.equal(d.tc, false);
  assert.deepEqual(d.answer, answer);
  // Whole glue RRsets, in order, as many as fit.
  assert.ok(d.additional.length > 0 && d.additional.length < 9);
  assert.deepEqual(d.additional, glue.slice(0, d.additional.length));
  assert.deepEqual(d.edns, EDNS);
  // One octet less than everything: one glue record less, still no TC.
  const short = fit(m, full.length - 1).d;
  assert.deepEqual([short.tc, short.answer.length, short.additional.length], [false, 9, 8]);
});

test("a negative answer keeps its SOA and drops the additional section", () => {
  const explain = Array.from({ length: 20 }, (_, i) =>
    rr(NAME, { type: Type.TXT, strings: ["x".repeat(40 + i)] }),
  );
  const m = reply(NAME, Type.A, { rcode: Rcode.NXDOMAIN, authority: [SOA], additional: explain });
  const { d } = fit(m, 512);
  assert.deepEqual([d.tc, d.rcode, d.answer, d.authority], [false, Rcode.NXDOMAIN, [], [SOA]]);
  assert.ok(d.additional.length < 20);
});

test("a positive answer loses its NS records before any of the answer, without TC", () => {
  const ns = Array.from({ length: 8 }, (_, i) =>
    rr("cluster.local.", { type: Type.NS, target: `${"n".repeat(40)}${i}.example.` }),
  );
  const m = reply(NAME, Type.A, { answer: addresses(20), authority: ns });
  const { d } = fit(m, 512);
  assert.deepEqual([d.tc, d.answer.length, d.authority.length, d.additional.length], [false, 20, 0, 0]);
  // When the answer itself does not fit, it is cut and the NS records go too.
  const big = fit({ ...m, answer: addresses(40) }, 512).d;
  assert.deepEqual([big.tc, big.answer.length, big.authority.length], [true, 29, 0]);
});

test("a referral (empty answer, NS in the authority) is cut with TC=1", () => {
  const ns = Array.from({ length: 20 }, (_, i) =>
    rr("sub.example.", { type: Type.NS, target: `${"n".repeat(30)}${i}.example.` }),
  );
  const { d } = fit(reply("x.sub.example.", Type.A, { aa: false, authority: ns }), 512);
  assert.equal(d.tc, true);
  assert.ok(d.authority.length > 0 && d.authority.length < 20);
  assert.deepEqual(d.authority, ns.slice(0, d.authority.length));
});

test("a referral that leaves out in-domain glue has TC=1; one that leaves out sibling glue has not (RFC 9471)", () => {
  for (const [servers, tc] of [
    ["sub.example.", true],
    ["Sibling.example.", false],
  ] as const) {
    const names = Array.from({ length: 13 }, (_, i) => `name-server-${i}.${servers}`);
    const ns = names.map((target) => rr("SUB.example.", { type: Type.NS, target }));
    const glue = names.flatMap((n, i) => [
      rr(n, { type: Type.A, address: `192.0.2.${i}` }),
      rr(n, { type: Type.AAAA, address: `2001:db8::${i}` }),
    ]);
    const { d } = fit(reply("x.sub.example.", Type.A, { aa: false, authority: ns, additional: glue }), 512);
    assert.equal(d.authority.length, 13);
    assert.ok(d.additional.length > 0 && d.additional.length < 26, `${d.additional.length}`);
    assert.equal(d.tc, tc, servers);
  }
});

test("CNAME chain: the CNAME and as many of the target's addresses as fit", () => {
  const target = "web.default.svc.cluster.local.";
  const answer = [rr(NAME, { type: Type.CNAME, target }), ...addresses(60, target)];
  const { d } = fit(reply(NAME, Type.A, { answer }), 512);
  assert.equal(d.tc, true);
  assert.equal(d.answer[0].type, Type.CNAME);
  assert.ok(d.answer.length > 2);
  assert.deepEqual(d.answer, answer.slice(0, d.answer.length));
});

test("a signed RRset is kept with its signatures or not at all", () => {
  const target = "web.example.";
  const answer = [
    rr(NAME, { type: Type.CNAME, target }),
    rrsig(NAME, Type.CNAME),
    ...addresses(30, target),
    rrsig(target, Type.A),
    rrsig(target, Type.A),
  ];
  const { d } = fit(reply(NAME, Type.A, { answer, edns: { ...EDNS, do: true } }), 512);
  assert.equal(d.tc, true);
  assert.deepEqual(
    d.answer.map((r) => r.type),
    [Type.CNAME, 46],
  );
  // Owners that differ only in case are one RRset (RFC 4343), signed as a whole.
  const mixed = [
    ...addresses(20, "Web.Example."),
    ...addresses(20, "web.example."),
    rrsig("WEB.EXAMPLE.", Type.A),
  ];
  assert.deepEqual(fit(reply(NAME, Type.A, { answer: mixed }), 512).d.answer, []);
  // The same addresses unsigned are cut.
  const unsigned = answer.filter((r) => r.type !== 46);
  const u = fit(reply(NAME, Type.A, { answer: unsigned }), 512).d;
  assert.ok(u.answer.length > 20);
});

test("TC set by whoever built the reply stays set", () => {
  const m = reply(NAME, Type.A, { answer: addresses(3), additional: addresses(60, "x.example."), tc: true });
  const { d } = fit(m, 512);
  assert.deepEqual([d.tc, d.answer.length], [true, 3]);
});

test("an OPT record whose options do not fit loses the options, not the question", () => {
  const edns: Edns = { ...EDNS, options: [{ code: 12, data: new Uint8Array(600) }] };
  const m = reply(NAME, Type.A, { answer: addresses(2), edns });
  const { d } = fit(m, 512);
  assert.deepEqual(d.edns, EDNS);
  assert.deepEqual(d.question, m.question);
  assert.equal(d.answer.length, 2);
});

test("random replies: never over the size, sections are prefixes, TC exactly when required data is cut", () => {
  const r = rng(2181);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const names = ["a.example.", "b.example.", "x.y.example.", "example."];
  const some = (n: number): RR[] =>
    Array.from({ length: n }, () => {
      const name = pick(names);
      return pick<RR>([
        rr(name, { type: Type.A, address: "192.0.2.1" }),
        rr(name, { type: Type.TXT, strings: ["t".repeat(Math.floor(r() * 200))] }),
        rr(name, { type: Type.MX, preference: 1, exchange: pick(names) }),
        rr(name, { type: Type.SRV, priority: 1, weight: 1, port: 1, target: pick(names) }),
        rrsig(name, Type.A),
      ]);
    });
  for (let i = 0; i < 500; i++) {
    const negative = r() < 0.3;
    const m = reply("q.example.", Type.A, {
      answer: negative ? [] : some(Math.floor(r() * 40)),
      authority: negative ? [SOA, ...some(Math.floor(r() * 3))] : some(Math.floor(r() * 5)),
      additional: some(Math.floor(r() * 30)),
      edns: r() < 0.5 ? EDNS : undefined,
    });
    const max = pick([512, 700, 1232, 4096]);
    const { d, full } = fit(m, max);
    const whole = decode(full);
    for (const s of ["answer", "authority", "additional"] as const) {
      assert.deepEqual(d[s], whole[s].slice(0, d[s].length), s);
    }
    const positive = whole.answer.length > 0 && !whole.authority.some((x) => x.type === Type.SOA);
    const cut =
      d.answer.length < whole.answer.length || (!positive && d.authority.length < whole.authority.length);
    assert.equal(d.tc, cut, `reply ${i}`);
    assert.deepEqual(d.edns, whole.edns);
    if (d.additional.length > 0) assert.equal(d.authority.length, whole.authority.length);
  }
});

test("bytes that are not a reply throw FitError", () => {
  const full = encode(reply(NAME, Type.A, { answer: addresses(100) }));
  assert.throws(
    () => fitReply(full.subarray(0, 700), 12 + NAME.length + 5, 512),
    (e: unknown) => e instanceof FitError && e.code === "CDNS_ERR_FIT",
  );
});
