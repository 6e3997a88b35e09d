import { test } from "node:test";
import assert from "node:assert/strict";
import { ResponseLimiter, type RrlOptions } from "./limiter.ts";
import { prefixKey } from "./prefix.ts";
import { rrlStats } from "./stats.ts";
import { scanQuery, type Scanned } from "../../dns/scan.ts";
import { encode } from "../../dns/encode.ts";
import { decode } from "../../dns/decode.ts";
import { newQuery, replyTo, type Msg, type RR } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { bytesPerCall } from "../../../test/helpers/bytes-per-call.ts";

const OPTS: RrlOptions = {
  zones: [],
  windowS: 5,
  v4Bits: 24,
  v6Bits: 56,
  responses: 10,
  nodata: 10,
  nxdomains: 10,
  referrals: 10,
  errors: 10,
  slip: 2,
  maxTable: 1000,
  reportOnly: false,
};

const SOA: RR = {
  name: "example.org.",
  type: Type.SOA,
  class: 1,
  ttl: 60,
  data: {
    type: Type.SOA,
    mname: "ns.example.org.",
    rname: "h.example.org.",
    serial: 1,
    refresh: 1,
    retry: 1,
    expire: 1,
    minimum: 60,
  },
};

/** A query and its reply, encoded, as the pipeline hands them to the limiter. */
function exchange(
  name: string,
  type: number,
  shape: "answer" | "nodata" | "nxdomain" | "referral" | "servfail",
  edns = false,
): { q: Scanned; reply: Buffer; query: Buffer } {
  const qm = newQuery(name, type, 1, 7);
  if (edns) qm.edns = { udpSize: 1232, version: 0, do: true, options: [] };
  const query = encode(qm);
  const s = scanQuery(query);
  assert.ok(!("drop" in s));
  const r: Msg = replyTo(
    qm,
    shape === "nxdomain" ? Rcode.NXDOMAIN : shape === "servfail" ? Rcode.SERVFAIL : 0,
  );
  r.qr = true;
  if (shape === "answer")
    for (let i = 0; i < 20; i++)
      r.answer.push({
        name,
        type: Type.A,
        class: 1,
        ttl: 60,
        data: { type: Type.A, address: `192.0.2.${i}` },
      });
  if (shape === "nodata" || shape === "nxdomain") r.authority.push(SOA);
  if (shape === "referral")
    r.authority.push({
      name: "sub.example.org.",
      type: Type.NS,
      class: 1,
      ttl: 60,
      data: { type: Type.NS, target: "ns.sub.example.org." },
    });
  if (edns) r.edns = { udpSize: 1232, version: 0, do: true, options: [] };
  return { q: s, reply: encode(r), query };
}

/** Sends `n` replies at `now`, one ms apart; counts what the limiter let through whole, truncated, or not. */
function flood(l: ResponseLimiter, x: ReturnType<typeof exchange>, from: string, n: number, now: number) {
  const out = { whole: 0, truncated: 0, dropped: 0 };
  for (let i = 0; i < n; i++) {
    const r = l.limit(x.reply, x.q, from, now + i);
    if (r === undefined) out.dropped++;
    else if (r === x.reply) out.whole++;
    else out.truncated++;
  }
  return out;
}

test("prefixes: IPv4 and IPv6 cut to their lengths; mapped IPv4 counts as IPv4; junk is no key", () => {
  assert.equal(prefixKey("192.0.2.77", 24, 56), prefixKey("192.0.2.1", 24, 56));
  assert.notEqual(prefixKey("192.0.2.77", 24, 56), prefixKey("192.0.3.77", 24, 56));
  assert.notEqual(prefixKey("192.0.2.77", 32, 56), prefixKey("192.0.2.1", 32, 56));
  assert.equal(prefixKey("0.0.0.1", 0, 56), prefixKey("255.255.255.255", 0, 56));
  assert.equal(prefixKey("::ffff:192.0.2.9", 24, 56), prefixKey("192.0.2.1", 24, 56));
  assert.equal(prefixKey("2001:db8:1:2ff::1", 56, 56), prefixKey("2001:db8:1:200::ffff", 56, 56));
  assert.notEqual(prefixKey("2001:db8:1:2ff::1", 64, 64), prefixKey("2001:db8:1:200::ffff", 64, 64));
  assert.equal(prefixKey("fe80::1%eth0", 64, 64), prefixKey("fe80::2", 64, 64));
  for (const junk of ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..2.3", "a.b.c.d", "1:2:3", "1::2::3", "g::1"])
    assert.equal(prefixKey(junk, 24, 56), undefined, junk);
});

test("a network gets ALLOWANCE identical answers a second; then every other one slips, truncated", () => {
  const l = new ResponseLimiter(OPTS);
  const x = exchange("www.example.org.", Type.A, "answer", true);
  const first = flood(l, x, "192.0.2.1", 100, 1000);
  assert.deepEqual(first, { whole: 10, truncated: 45, dropped: 45 });
  // A slipped reply: the question and an OPT with DO, TC set, nothing else; never larger than the query.
  const slipped = flood(l, x, "192.0.2.1", 2, 1100).truncated > 0;
  assert.ok(slipped);
  const t = l.limit(x.reply, x.q, "192.0.2.1", 1101) ?? l.limit(x.reply, x.q, "192.0.2.1", 1102)!;
  const m = decode(t);
  assert.equal(m.tc, true);
  assert.equal(m.id, 7);
  assert.deepEqual([m.answer.length, m.authority.length, m.additional.length], [0, 0, 0]);
  assert.deepEqual(m.edns && [m.edns.udpSize, m.edns.do], [1232, true]);
  assert.deepEqual(m.question, [{ name: "www.example.org.", type: Type.A, class: 1 }]);
  assert.ok(t.length <= x.query.length);
});

test("other networks, other questions and other kinds of response have accounts of their own", () => {
  const l = new ResponseLimiter(OPTS);
  const www = exchange("www.example.org.", Type.A, "answer");
  flood(l, www, "192.0.2.1", 100, 1000);
  assert.equal(flood(l, www, "192.0.3.1", 10, 1000).whole, 10, "another /24");
  assert.equal(flood(l, exchange("ftp.example.org.", Type.A, "answer"), "192.0.2.1", 10, 1000).whole, 10);
  // NODATA counts by name, any type; NXDOMAIN by zone (the SOA's owner), any name; errors all together.
  const nodata = flood(l, exchange("www.example.org.", Type.MX, "nodata"), "192.0.2.1", 10, 1000);
  assert.equal(nodata.whole, 10);
  assert.equal(flood(l, exchange("www.example.org.", Type.TXT, "nodata"), "192.0.2.1", 1, 1000).whole, 0);
  assert.equal(flood(l, exchange("a.example.org.", Type.A, "nxdomain"), "192.0.2.1", 10, 1000).whole, 10);
  assert.equal(flood(l, exchange("b.example.org.", Type.AAAA, "nxdomain"), "192.0.2.1", 1, 1000).whole, 0);
  assert.equal(flood(l, exchange("x.example.org.", Type.A, "servfail"), "192.0.2.1", 10, 1000).whole, 10);
  assert.equal(flood(l, exchange("y.example.net.", Type.A, "servfail"), "192.0.2.1", 1, 1000).whole, 0);
  assert.equal(flood(l, exchange("a.sub.example.org.", Type.A, "referral"), "192.0.2.1", 10, 1000).whole, 10);
  assert.equal(flood(l, exchange("b.sub.example.org.", Type.A, "referral"), "192.0.2.1", 1, 1000).whole, 0);
});

test("credit comes back at ALLOWANCE a second, a flood's debt is remembered for the window at most", () => {
  const l = new ResponseLimiter(OPTS);
  const x = exchange("www.example.org.", Type.A, "answer");
  assert.equal(flood(l, x, "192.0.2.1", 10, 0).whole, 10);
  assert.equal(flood(l, x, "192.0.2.1", 1, 10).whole, 0);
  // 0.5 s later: 5 credits, 1 owed.
  assert.equal(flood(l, x, "192.0.2.1", 10, 510).whole, 4);
  // A long flood: the debt stops at 5 s of allowance (50); after 5 s of quiet the network is served.
  flood(l, x, "192.0.2.1", 5000, 1000);
  assert.equal(flood(l, x, "192.0.2.1", 1, 6100).whole, 0, "still paying back at 5.1 s");
  assert.equal(flood(l, x, "192.0.2.1", 1, 12_000).whole, 1, "served once the window has passed");
});

test("slip-ratio 0 drops all, 1 truncates all; report-only sends all and counts; 0 is no limit", () => {
  const x = exchange("www.example.org.", Type.A, "answer");
  assert.deepEqual(flood(new ResponseLimiter({ ...OPTS, slip: 0 }), x, "192.0.2.1", 30, 0), {
    whole: 10,
    truncated: 0,
    dropped: 20,
  });
  assert.deepEqual(flood(new ResponseLimiter({ ...OPTS, slip: 1 }), x, "192.0.2.1", 30, 0), {
    whole: 10,
    truncated: 20,
    dropped: 0,
  });
  const before = rrlStats.reported;
  assert.equal(flood(new ResponseLimiter({ ...OPTS, reportOnly: true }), x, "192.0.2.1", 30, 0).whole, 30);
  assert.equal(rrlStats.reported - before, 20);
  assert.equal(flood(new ResponseLimiter({ ...OPTS, responses: 0 }), x, "192.0.2.1", 30, 0).whole, 30);
});

test("the table holds max-table-size accounts, the one idle longest going first; ZONES limit only their names", () => {
  const l = new ResponseLimiter({ ...OPTS, maxTable: 100 });
  const x = exchange("www.example.org.", Type.A, "answer");
  // 256 networks, one after the other, each deep in debt (5 s of it, the window).
  for (let i = 0; i < 256; i++) flood(l, x, `10.0.${i}.1`, 100, i * 10);
  assert.equal(l.accounts, 100);
  assert.equal(flood(l, x, "10.0.255.1", 1, 2600).whole, 0, "a recent network is still limited");
  assert.equal(flood(l, x, "10.0.0.1", 1, 2600).whole, 1, "the first was let go: a fresh account");

  const zoned = new ResponseLimiter(
    { ...OPTS, zones: ["sub.example.org."] },
    { inZones: (n) => n.endsWith("sub.example.org.") },
  );
  assert.equal(flood(zoned, x, "192.0.2.1", 30, 0).whole, 30, "outside ZONES: not limited");
  assert.equal(flood(zoned, exchange("a.sub.example.org.", Type.A, "answer"), "192.0.2.1", 30, 0).whole, 10);
});

test("a reply from the client asked last allocates nothing: answered, dropped, NXDOMAIN, NODATA", () => {
  const l = new ResponseLimiter({ ...OPTS, slip: 0 });
  const kinds = [
    exchange("www.example.org.", Type.A, "answer"),
    exchange("a.example.org.", Type.A, "nxdomain"),
    exchange("www.example.org.", Type.MX, "nodata"),
    exchange("a.sub.example.org.", Type.A, "referral"),
  ];
  const bytes = bytesPerCall((i) => {
    const x = kinds[i & 3];
    l.limit(x.reply, x.q, "192.0.2.1", i);
  }, 200_000);
  assert.ok(bytes < 1, `${bytes.toFixed(2)} bytes per reply`);
});
