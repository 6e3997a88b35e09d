// forward against a real upstream (Debian's knotd, test/upstream/knot.ts) and, for what a real server
// will not do on demand (spoofed replies, silence, held replies), a scripted one.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import type { ForwardOptions } from "./forward.ts";
import { Forward } from "./forward.ts";
import { FORWARD_MAX_AGE } from "./relay.ts";
import { parseForward } from "./setup.ts";
import { forwardStats, type UpstreamStats } from "./stats.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { replyTo } from "../../dns/message.ts";
import { encode } from "../../dns/encode.ts";
import { decode } from "../../dns/decode.ts";
import { fitReply } from "../../dns/fit.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { makeRequest, recordingNext, type RequestOptions } from "../../../test/helpers/request.ts";
import { BIG_COUNT, MID_COUNT, startKnot, type Knot } from "../../../test/upstream/knot.ts";
import { startFakeUpstream } from "../../../test/upstream/fake-upstream.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";

const silent = pino({ level: "silent" });
const forwards: Forward[] = [];
let a: Knot;
let b: Knot;

before(async () => {
  [a, b] = await Promise.all([startKnot({ id: "a" }), startKnot({ id: "b" })]);
});

after(async () => {
  for (const f of forwards) f.close();
  await Promise.all([a.stop(), b.stop()]);
});

/** A Forward from a forward directive's text, with CoreDNS's timeouts unless `over` says otherwise. */
function make(text: string, over: Partial<ForwardOptions> = {}, next: Handler = recordingNext()) {
  const d = parseCorefile(`. {\n${text}\n}\n`, "Corefile")[0].directives[0];
  const f = new Forward({ ...parseForward(d, "/"), ...over }, silent);
  forwards.push(f);
  return { f, h: f.handler(next) };
}

async function ask(h: Handler, name: string, type: number, o: RequestOptions = {}) {
  const req: Request = makeRequest(name, type, o);
  return { req, reply: await h.serve(req) };
}

/** The TXT string at who.example.org.: which knot answered. */
async function who(h: Handler): Promise<string> {
  const { reply } = await ask(h, "who.example.org", Type.TXT);
  assert.equal(reply.rcode, Rcode.NOERROR);
  return (reply.answer[0].data as { strings: string[] }).strings[0];
}

/** Packets from an upstream not taken as a reply, whatever the reason. */
function rejectedCount(s: UpstreamStats): number {
  return Object.values(s.rejected).reduce((a, b) => a + b, 0);
}

function addresses(m: Msg): string[] {
  return m.answer.map((rr) => (rr.data as { address: string }).address).sort();
}

/** Waits, polling, until `cond` holds; fails after a bounded number of tries. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for: ${what}`);
}

test("forwards a query and relays the upstream's answer as this server's", async () => {
  const { h } = make(`forward . 127.0.0.1:${a.port}`);
  const www = await ask(h, "WWW.Example.org", Type.A, { edns: true });
  assert.equal(www.reply.rcode, Rcode.NOERROR);
  assert.equal(www.reply.id, www.req.msg.id);
  assert.deepEqual(www.reply.question, www.req.msg.question);
  assert.equal(www.reply.aa, true);
  assert.deepEqual(addresses(www.reply), ["192.0.2.1"]);
  assert.equal(www.reply.answer[0].name, "www.example.org.");
  assert.equal(www.reply.answer[0].ttl, 300);
  assert.equal(www.req.answeredBy, "forward");
  assert.equal(www.req.cache.maxAge, FORWARD_MAX_AGE);

  const alias = await ask(h, "alias.example.org", Type.AAAA);
  assert.deepEqual(
    alias.reply.answer.map((rr) => rr.type),
    [Type.CNAME, Type.AAAA],
  );
  const missing = await ask(h, "nope.example.org", Type.A);
  assert.equal(missing.reply.rcode, Rcode.NXDOMAIN);
  assert.equal(missing.reply.authority[0].type, Type.SOA);
});

test("a truncated UDP reply is asked again over TCP, and TCP connections are reused", async () => {
  const { f, h } = make(`forward . 127.0.0.1:${a.port}`);
  const s = f.upstreams[0].stats;
  const before = { requests: s.requests, tcpMiss: s.connCacheMisses.tcp, tcpHit: s.connCacheHits.tcp };

  const big = await ask(h, "big.example.org", Type.A);
  assert.equal(big.reply.tc, false);
  assert.equal(big.reply.answer.length, BIG_COUNT);
  assert.equal(s.requests - before.requests, 2, "one UDP query, then one over TCP");
  assert.equal(s.connCacheMisses.tcp - before.tcpMiss, 1);

  // A reply that fits in our EDNS buffer needs no retry, whatever the client's own size.
  const mid = await ask(h, "mid.example.org", Type.A, { edns: false });
  assert.equal(mid.reply.answer.length, MID_COUNT);
  assert.equal(s.requests - before.requests, 3);

  // A TCP client's queries go over TCP, on the connection kept from the retry.
  await ask(h, "big.example.org", Type.A, { proto: "tcp" });
  await ask(h, "www.example.org", Type.A, { proto: "tcp" });
  assert.equal(s.connCacheHits.tcp - before.tcpHit, 2);
  assert.equal(s.connCacheMisses.tcp - before.tcpMiss, 1);
  assert.equal(f.upstreams[0].idleConnections("tcp"), 1);
});

test("pooled connections expire", async () => {
  const { f, h } = make(`forward . 127.0.0.1:${a.port} {\n expire 50ms\n}`);
  const u = f.upstreams[0];
  await ask(h, "www.example.org", Type.A, { proto: "tcp" });
  assert.equal(u.idleConnections("tcp"), 1);
  await until(() => u.idleConnections("tcp") === 0, "the idle connection to expire");
  const misses = u.stats.connCacheMisses.tcp;
  await ask(h, "www.example.org", Type.A, { proto: "tcp" });
  assert.equal(u.stats.connCacheMisses.tcp, misses + 1);
});

test("a TCP connection the upstream closed while idle is replaced", async () => {
  const up = await startFakeUpstream((q) => [{ ...replyTo(q), ra: true }]);
  try {
    const { f, h } = make(`forward . 127.0.0.1:${up.port}`);
    const s = f.upstreams[0].stats;
    assert.equal((await ask(h, "one.example.org", Type.A, { proto: "tcp" })).reply.rcode, Rcode.NOERROR);
    // Nothing runs between the drop and the query, so the pool still holds the dead connection.
    up.dropConnections();
    const before = { failures: s.failures, hits: s.connCacheHits.tcp, misses: s.connCacheMisses.tcp };
    assert.equal((await ask(h, "two.example.org", Type.A, { proto: "tcp" })).reply.rcode, Rcode.NOERROR);
    assert.equal(s.failures, before.failures, "no failed exchange");
    assert.equal(s.connCacheHits.tcp, before.hits + 1, "the pooled connection was tried");
    assert.equal(s.connCacheMisses.tcp, before.misses, "and replaced without counting a miss");
    assert.equal(f.upstreams[0].idleConnections("tcp"), 1);
    assert.deepEqual(
      up.queries.map((q) => q.msg.question[0].name),
      ["one.example.org.", "two.example.org."],
    );
  } finally {
    await up.close();
  }
});

test("end to end: the pipeline fits forwarded replies to the client's buffer", async () => {
  const server = await startServer(`. {\n    forward . 127.0.0.1:${a.port}\n}\n`);
  try {
    const www = await dig(server.port, "www.example.org", "A");
    assert.equal(www.status, "NOERROR");
    assert.deepEqual(www.answer, ["www.example.org. 300 IN A 192.0.2.1"]);

    const midPlain = await dig(server.port, "mid.example.org", "A", "+noedns", "+ignore");
    assert.ok(midPlain.flags.includes("tc"), "over 512 octets: truncated for a client without EDNS");
    const midEdns = await dig(server.port, "mid.example.org", "A", "+bufsize=1232", "+ignore");
    assert.ok(!midEdns.flags.includes("tc"));
    assert.equal(midEdns.answer.length, MID_COUNT);

    const bigUdp = await dig(server.port, "big.example.org", "A", "+bufsize=4096", "+ignore");
    assert.ok(bigUdp.flags.includes("tc"));
    const bigTcp = await dig(server.port, "big.example.org", "A", "+tcp");
    assert.equal(bigTcp.answer.length, BIG_COUNT);
  } finally {
    await server.stop();
  }
});

test("force_tcp and prefer_udp choose the transport to the upstream", async () => {
  const up = await startFakeUpstream((q) => [{ ...replyTo(q), ra: true }]);
  try {
    const to = `127.0.0.1:${up.port}`;
    const cases: [string, "udp" | "tcp", "udp" | "tcp"][] = [
      [`forward . ${to}`, "udp", "udp"],
      [`forward . ${to}`, "tcp", "tcp"],
      [`forward . ${to} {\n force_tcp\n}`, "udp", "tcp"],
      [`forward . ${to} {\n prefer_udp\n}`, "tcp", "udp"],
      [`forward . ${to} {\n force_tcp\n prefer_udp\n}`, "udp", "tcp"],
    ];
    for (const [text, client, upstream] of cases) {
      const { h } = make(text);
      up.queries.length = 0;
      const { reply } = await ask(h, "x.example.org", Type.A, { proto: client });
      assert.equal(reply.rcode, Rcode.NOERROR);
      assert.deepEqual(
        up.queries.map((q) => q.proto),
        [upstream],
        `${text} with a ${client} client`,
      );
    }
  } finally {
    await up.close();
  }
});

test("the upstream gets our EDNS record with the client's DO bit, not the client's ID", async () => {
  const up = await startFakeUpstream((q) => [replyTo(q)]);
  try {
    const { h } = make(`forward . 127.0.0.1:${up.port}`);
    await ask(h, "x.example.org", Type.A, { do: true });
    await ask(h, "y.example.org", Type.A, { edns: false });
    const [withDo, plain] = up.queries.map((q) => q.msg);
    assert.equal(withDo.edns?.udpSize, 1232);
    assert.equal(withDo.edns?.do, true);
    assert.equal(plain.edns?.udpSize, 1232, "EDNS towards the upstream even for a client without it");
    assert.equal(plain.edns?.do, false);
    assert.equal(plain.question[0].name.toLowerCase(), "y.example.org.");
  } finally {
    await up.close();
  }
});

test("the upstream's EDNS options (its cookie, its NSID) stay with the upstream", async () => {
  const up = await startFakeUpstream((q) => {
    const m = replyTo(q);
    const data = new Uint8Array([1, 2, 3, 4]);
    m.edns = {
      udpSize: 4096,
      version: 0,
      do: false,
      options: [
        { code: 10, data },
        { code: 3, data },
      ],
    };
    return [m];
  });
  try {
    const { h } = make(`forward . 127.0.0.1:${up.port}`);
    const { reply } = await ask(h, "x.example.org", Type.A, { edns: true });
    assert.equal(reply.rcode, Rcode.NOERROR);
    assert.equal(reply.edns, undefined);
  } finally {
    await up.close();
  }
});

test("a reply with the wrong ID or question is not taken", async () => {
  const evil = (q: Msg, id: number, name: string): Msg => ({
    ...replyTo(q),
    id,
    question: [{ ...q.question[0], name }],
    answer: [{ name, type: Type.A, class: 1, ttl: 60, data: { type: Type.A, address: "6.6.6.6" } }],
  });
  const up = await startFakeUpstream((q) => {
    const name = q.question[0].name;
    const good: Msg = {
      ...replyTo(q),
      answer: [{ name, type: Type.A, class: 1, ttl: 60, data: { type: Type.A, address: "192.0.2.7" } }],
    };
    if (name.toLowerCase().startsWith("spoofed-only")) return [evil(q, q.id ^ 1, name)];
    return [evil(q, q.id ^ 0x8000, name), evil(q, q.id, "other.example.org."), good];
  });
  try {
    for (const proto of ["udp", "tcp"] as const) {
      const { f, h } = make(`forward . 127.0.0.1:${up.port}`);
      const s = f.upstreams[0].stats;
      const mismatched = rejectedCount(s);
      const { reply } = await ask(h, "victim.example.org", Type.A, { proto });
      assert.deepEqual(addresses(reply), ["192.0.2.7"], proto);
      assert.equal(rejectedCount(s) - mismatched, 2, proto);
    }
    // Only a wrong reply comes: each of the two tries (CoreDNS's default for one upstream) times out,
    // and the query is a SERVFAIL rather than take it.
    // No health checks: their replies, as wrong, would be counted too.
    const { f, h } = make(`forward . 127.0.0.1:${up.port} {\n max_fails 0\n}`, { readTimeoutMs: 200 });
    const s = f.upstreams[0].stats;
    const before = { mismatched: rejectedCount(s), failures: s.failures };
    const { reply } = await ask(h, "spoofed-only.example.org", Type.A);
    assert.equal(reply.rcode, Rcode.SERVFAIL);
    assert.equal(reply.answer.length, 0);
    assert.equal(rejectedCount(s) - before.mismatched, 2);
    assert.equal(s.failures - before.failures, 2);
  } finally {
    await up.close();
  }
});

test("an upstream that stops answering is marked down by health checks, then up again", async () => {
  const first = await startKnot({ id: "first" });
  const second = await startKnot({ id: "second" });
  try {
    const { f, h } = make(
      `forward . 127.0.0.1:${first.port} 127.0.0.1:${second.port} {
    policy sequential
    max_fails 2
    health_check 20ms
}`,
    );
    const [u1, u2] = f.upstreams;
    assert.equal(await who(h), "first");
    await first.stop();

    // The query that finds it gone is answered by the other one, and starts the checks.
    assert.equal(await who(h), "second");
    assert.ok(u1.stats.failures > 0);
    await until(() => u1.down, "the stopped upstream to be marked down");
    assert.ok(u1.stats.healthcheckFailures >= 2);
    const tried = u1.stats.requests;
    assert.equal(await who(h), "second");
    assert.equal(u1.stats.requests, tried, "a down upstream is not tried");
    assert.equal(u2.down, false);

    // Back on its port: the next check passes and it answers again (sequential: it is first).
    const again = await startKnot({ id: "first", port: first.port });
    try {
      await until(() => !u1.down, "the restarted upstream to be marked up");
      assert.equal(u1.fails, 0);
      assert.equal(await who(h), "first");
    } finally {
      await again.stop();
    }
  } finally {
    await Promise.all([first.stop(), second.stop()]);
  }
});

test("every upstream down: SERVFAIL from the refused attempt, then at once with failfast", async () => {
  const gone = await startKnot();
  await gone.stop();
  // Timeouts far beyond the test's own: a SERVFAIL can only come from the refusal, not a timeout.
  const slow = { readTimeoutMs: 60_000, deadlineMs: 60_000, healthCheckTimeoutMs: 60_000 };
  const { f, h } = make(`forward . 127.0.0.1:${gone.port} {\n max_fails 1\n health_check 20ms\n}`, slow);
  const u = f.upstreams[0];
  const first = await ask(h, "www.example.org", Type.A);
  assert.equal(first.reply.rcode, Rcode.SERVFAIL);
  assert.equal(first.req.answeredBy, "forward");
  await until(() => u.down, "the upstream to be marked down");

  // All down and no failfast: CoreDNS's fallback, one random upstream anyway.
  const broken = forwardStats.healthcheckBroken;
  const tried = u.stats.requests;
  assert.equal((await ask(h, "www.example.org", Type.A)).reply.rcode, Rcode.SERVFAIL);
  assert.equal(forwardStats.healthcheckBroken, broken + 1);
  assert.equal(u.stats.requests, tried + 1);

  const ff = make(
    `forward . 127.0.0.1:${gone.port} {\n max_fails 1\n health_check 20ms\n failfast_all_unhealthy_upstreams\n}`,
    slow,
  );
  await ask(ff.h, "www.example.org", Type.A);
  await until(() => ff.f.upstreams[0].down, "the upstream to be marked down");
  const before = ff.f.upstreams[0].stats.requests;
  assert.equal((await ask(ff.h, "www.example.org", Type.A)).reply.rcode, Rcode.SERVFAIL);
  assert.equal(ff.f.upstreams[0].stats.requests, before, "failfast: no attempt at all");
});

test("a silent upstream times out after read_timeout and the next one answers", async () => {
  const silentUp = await startFakeUpstream(() => []);
  try {
    const { f, h } = make(
      `forward . 127.0.0.1:${silentUp.port} 127.0.0.1:${a.port} {\n policy sequential\n max_fails 0\n read_timeout 100ms\n}`,
      // Within one second for both: only a read timeout below CoreDNS's 2 s leaves time for the second.
      { deadlineMs: 1000 },
    );
    assert.equal(await who(h), "a");
    assert.equal(f.upstreams[0].stats.failures, 1);
    assert.equal(f.upstreams[0].down, false, "max_fails 0: never marked down");
    // Alone, within the overall deadline: SERVFAIL.
    const only = make(`forward . 127.0.0.1:${silentUp.port}`, { readTimeoutMs: 100, deadlineMs: 150 });
    assert.equal((await ask(only.h, "www.example.org", Type.A)).reply.rcode, Rcode.SERVFAIL);
  } finally {
    await silentUp.close();
  }
});

test("policy: sequential keeps the order, round_robin rotates, random reaches every upstream", async () => {
  const list = `127.0.0.1:${a.port} 127.0.0.1:${b.port}`;
  const seq = make(`forward . ${list} {\n policy sequential\n}`);
  const rr = make(`forward . ${list} {\n policy round_robin\n}`);
  const rnd = make(`forward . ${list}`);
  const seqSeen: string[] = [];
  const rrSeen: string[] = [];
  for (let i = 0; i < 4; i++) {
    seqSeen.push(await who(seq.h));
    rrSeen.push(await who(rr.h));
  }
  assert.deepEqual(seqSeen, ["a", "a", "a", "a"]);
  assert.deepEqual(rrSeen, ["a", "b", "a", "b"]);
  const seen = new Set<string>();
  for (let i = 0; i < 64 && seen.size < 2; i++) seen.add(await who(rnd.h));
  assert.deepEqual([...seen].sort(), ["a", "b"]);
});

test("FROM and except decide what is forwarded; the rest goes to the next plugin", async () => {
  const next = recordingNext();
  const { h } = make(`forward example.org 127.0.0.1:${a.port} {\n except private.example.org\n}`, {}, next);
  assert.equal((await ask(h, "www.example.org", Type.A)).reply.rcode, Rcode.NOERROR);
  assert.equal(next.calls.length, 0);
  const outside = await ask(h, "www.example.com", Type.A);
  const excepted = await ask(h, "db.private.example.org", Type.A);
  assert.equal(outside.reply.rcode, Rcode.REFUSED, "the recording next plugin's answer");
  assert.equal(excepted.reply.rcode, Rcode.REFUSED);
  assert.deepEqual(
    next.calls.map((r) => r.qname),
    ["www.example.com.", "db.private.example.org."],
  );
  assert.equal(outside.req.answeredBy, undefined);
});

test("FROM itself is forwarded even when except names it, as CoreDNS's forward does", async () => {
  const next = recordingNext();
  const { h } = make(`forward example.org 127.0.0.1:${a.port} {\n except example.org\n}`, {}, next);
  assert.equal((await ask(h, "example.org", Type.A)).reply.rcode, Rcode.NOERROR);
  assert.equal((await ask(h, "www.example.org", Type.A)).reply.rcode, Rcode.REFUSED);
  assert.deepEqual(
    next.calls.map((r) => r.qname),
    ["www.example.org."],
  );
});

test("max_concurrent: a query beyond the limit is REFUSED at once", async () => {
  const held: (() => void)[] = [];
  const up = await startFakeUpstream(
    (q) => new Promise<Msg[]>((resolve) => held.push(() => resolve([{ ...replyTo(q), ra: true }]))),
  );
  try {
    const { f, h } = make(`forward . 127.0.0.1:${up.port} {\n max_concurrent 2\n}`);
    const pending = [ask(h, "one.example.org", Type.A), ask(h, "two.example.org", Type.A)];
    await until(() => held.length === 2, "both queries to reach the upstream");
    const rejects = forwardStats.maxConcurrentRejects;
    const third = await ask(h, "three.example.org", Type.A);
    assert.equal(third.reply.rcode, Rcode.REFUSED);
    assert.equal(forwardStats.maxConcurrentRejects, rejects + 1);
    assert.equal(up.queries.length, 2, "the third never reached the upstream");
    for (const release of held) release();
    for (const { reply } of await Promise.all(pending)) assert.equal(reply.rcode, Rcode.NOERROR);
    assert.equal(f.inFlight, 0);
    // The limit counts queries in flight, not queries seen: there is room again.
    const fourth = ask(h, "four.example.org", Type.A);
    await until(() => held.length === 3, "the fourth query to reach the upstream");
    held[2]();
    assert.equal((await fourth).reply.rcode, Rcode.NOERROR);
  } finally {
    await up.close();
  }
});

test("next: a listed rcode goes on to the next forward, and only to a forward", async () => {
  const second = make(`forward . 127.0.0.1:${b.port}`);
  const first = make(`forward . 127.0.0.1:${a.port} {\n next NXDOMAIN\n}`, {}, second.h);
  const bReqs = second.f.upstreams[0].stats.requests;
  assert.equal((await ask(first.h, "nope.example.org", Type.A)).reply.rcode, Rcode.NXDOMAIN);
  assert.equal(second.f.upstreams[0].stats.requests, bReqs + 1, "asked the next forward's upstream");
  assert.equal(await who(first.h), "a", "other rcodes are answered");

  const next = recordingNext();
  const lone = make(`forward . 127.0.0.1:${a.port} {\n next NXDOMAIN\n}`, {}, next);
  assert.equal((await ask(lone.h, "nope.example.org", Type.A)).reply.rcode, Rcode.NXDOMAIN);
  assert.equal(next.calls.length, 0, "the next plugin is not a forward: the upstream's reply stands");
});

test("failover: an rcode listed moves on to the next upstream", async () => {
  const failing = await startFakeUpstream((q) => [replyTo(q, Rcode.SERVFAIL)]);
  try {
    const list = `127.0.0.1:${failing.port} 127.0.0.1:${a.port}`;
    const plain = make(`forward . ${list} {\n policy sequential\n}`);
    assert.equal((await ask(plain.h, "www.example.org", Type.A)).reply.rcode, Rcode.SERVFAIL);
    const fo = make(`forward . ${list} {\n policy sequential\n failover SERVFAIL\n}`);
    assert.equal(await who(fo.h), "a");
  } finally {
    await failing.close();
  }
});

test("an upstream that answers FORMERR to EDNS (no OPT in it) is asked again without EDNS", async () => {
  // An old server that knows no EDNS (RFC 6891 7): FORMERR to any query with an OPT record.
  const old = await startFakeUpstream((q) => {
    if (q.edns !== undefined) return [{ ...replyTo(q, Rcode.FORMERR), edns: undefined }];
    const name = q.question[0].name;
    const a = { name, type: Type.A, class: 1, ttl: 60, data: { type: Type.A, address: "192.0.2.5" } };
    return [{ ...replyTo(q), edns: undefined, answer: [a] }];
  });
  // One that knows EDNS and refuses this query: its FORMERR carries an OPT record, and stands.
  const strict = await startFakeUpstream((q) => [{ ...replyTo(q, Rcode.FORMERR), edns: q.edns }]);
  try {
    const { h } = make(`forward . 127.0.0.1:${old.port}`);
    for (const o of [{}, { edns: true }, { proto: "tcp" as const }]) {
      const { reply } = await ask(h, "old.example.org", Type.A, o);
      assert.equal(reply.rcode, Rcode.NOERROR, JSON.stringify(o));
      assert.deepEqual(addresses(reply), ["192.0.2.5"]);
    }
    const sent = old.queries.map((q) => `${q.proto} ${q.msg.edns === undefined ? "plain" : "edns"}`);
    assert.deepEqual(sent, ["udp edns", "udp plain", "udp edns", "udp plain", "tcp edns", "tcp plain"]);
    const s = make(`forward . 127.0.0.1:${strict.port} {\n max_fails 0\n}`);
    assert.equal((await ask(s.h, "strict.example.org", Type.A)).reply.rcode, Rcode.FORMERR);
    assert.equal(strict.queries.length, 1);
  } finally {
    await old.close();
    await strict.close();
  }
});

test("a forwarded reply encodes with the project's encoder", async () => {
  const { h } = make(`forward . 127.0.0.1:${a.port}`);
  const { reply } = await ask(h, "big.example.org", Type.A, { proto: "tcp" });
  const full = encode(reply);
  assert.ok(full.length > 1232);
  const fitted = fitReply(full, 12 + "big.example.org.".length + 1 + 4, 512);
  assert.ok(fitted.length <= 512 && decode(fitted).answer.length > 0);
});
