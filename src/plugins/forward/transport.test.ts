// forward's defences against forged replies on the wire to the upstream: a new source port per UDP
// query, the qname in 0x20 random case that the reply must echo, the fallback for an upstream that
// does not echo case, and the cap on open sockets. The upstream is a small UDP server of this test,
// which sees the source port and the spelling of every query (a real server's log does not).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { pino } from "pino";
import type { Msg } from "../../dns/message.ts";
import type { ForwardOptions } from "./forward.ts";
import { Forward } from "./forward.ts";
import { parseForward } from "./setup.ts";
import { forwardStats } from "./stats.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { replyTo } from "../../dns/message.ts";
import { encode } from "../../dns/encode.ts";
import { decode } from "../../dns/decode.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";

const silent = pino({ level: "silent" });
const closers: (() => void)[] = [];
after(() => closers.forEach((c) => c()));

interface Seen {
  port: number;
  name: string;
}

/** A UDP upstream on loopback: `answer` makes the replies to each query (none: stay silent). */
async function upstream(
  answer: (q: Msg) => Msg[],
  host = "127.0.0.1",
): Promise<{ port: number; seen: Seen[] }> {
  const sock = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
  await new Promise<void>((r) => sock.bind(0, host, r));
  const seen: Seen[] = [];
  sock.on("message", (pkt, rinfo) => {
    const q = decode(pkt);
    seen.push({ port: rinfo.port, name: q.question[0].name });
    for (const m of answer(q)) sock.send(encode(m), rinfo.port, rinfo.address);
  });
  closers.push(() => sock.close());
  return { port: sock.address().port, seen };
}

/** The A record 192.0.2.1 for the question as asked, echoed as the upstream got it. */
function answered(q: Msg): Msg {
  const name = q.question[0].name;
  return {
    ...replyTo(q),
    answer: [{ name, type: Type.A, class: 1, ttl: 60, data: { type: Type.A, address: "192.0.2.1" } }],
  };
}

/** The same reply with the question and answer lowercased, as an upstream without 0x20 echo sends. */
function lowered(q: Msg): Msg {
  const lower = { ...q, question: [{ ...q.question[0], name: q.question[0].name.toLowerCase() }] };
  return answered(lower);
}

function make(port: number, over: Partial<ForwardOptions> = {}, log = silent, host = "127.0.0.1") {
  const to = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  const d = parseCorefile(`. {\nforward . ${to}\n}\n`, "Corefile")[0].directives[0];
  const f = new Forward({ ...parseForward(d, "/"), ...over }, log);
  closers.push(() => f.close());
  return { f, h: f.handler(recordingNext()) };
}

const NAME = "www.spoof-target.example.org";

test("every UDP query goes out from a port of its own, its name in random case", async () => {
  const up = await upstream((q) => [answered(q)]);
  const { h } = make(up.port);
  const n = 200;
  for (let i = 0; i < n; i++) {
    const reply = await h.serve(makeRequest(NAME, Type.A));
    assert.equal(reply.rcode, Rcode.NOERROR);
    // The client's answer is in the server's spelling, whatever case went upstream.
    assert.equal(reply.answer[0].name, `${NAME}.`);
  }
  assert.equal(up.seen.length, n);
  // The kernel draws each port from ~28k: a few of 200 may repeat by chance, a reused socket never.
  const ports = new Set(up.seen.map((s) => s.port));
  assert.ok(ports.size >= n * 0.9, `${ports.size} ports for ${n} queries`);
  const names = new Set(up.seen.map((s) => s.name));
  assert.ok(names.size >= n * 0.9, `${names.size} spellings for ${n} queries`);
  for (const s of up.seen) assert.equal(s.name.toLowerCase(), `${NAME}.`);
});

test("an IPv6 upstream gets the same: a port of its own per query, 0x20 case", async () => {
  const up = await upstream((q) => [answered(q)], "::1");
  const { h } = make(up.port, {}, silent, "::1");
  for (let i = 0; i < 20; i++) assert.equal((await h.serve(makeRequest(NAME, Type.A))).rcode, Rcode.NOERROR);
  assert.ok(new Set(up.seen.map((s) => s.port)).size >= 18);
  assert.ok(new Set(up.seen.map((s) => s.name)).size >= 18);
});

test("names the upstream compressed against the 0x20 question come back in the server's spelling", async () => {
  const target = "www.spoof-target.example.org.";
  const up = await upstream((q) => {
    const name = q.question[0].name;
    // The encoder points the target's "spoof-target.example.org." at the question's octets.
    const cname = { type: Type.CNAME, target };
    return [{ ...replyTo(q), answer: [{ name, type: Type.CNAME, class: 1, ttl: 60, data: cname }] }];
  });
  const { h } = make(up.port);
  const reply = await h.serve(makeRequest("alias.spoof-target.example.org", Type.A));
  assert.notEqual(up.seen[0].name, "alias.spoof-target.example.org.", "sent in random case");
  assert.deepEqual(
    reply.answer.map((rr) => [rr.name, (rr.data as { target: string }).target]),
    [["alias.spoof-target.example.org.", target]],
  );
});

test("a reply that does not echo the case is refused; an upstream that never does is asked without 0x20", async () => {
  const up = await upstream((q) => [lowered(q)]);
  const { f, h } = make(up.port);
  const u = f.upstreams[0];
  const before = { case: u.stats.rejected.case, fallbacks: u.stats.caseFallbacks };
  const reply = await h.serve(makeRequest(NAME, Type.A));
  assert.equal(reply.rcode, Rcode.NOERROR);
  assert.equal(reply.answer[0].name, `${NAME}.`);
  // Two tries in 0x20 case, each refused, then one in the server's own (lowercase) spelling.
  assert.equal(up.seen.length, 3);
  assert.notEqual(up.seen[0].port, up.seen[1].port);
  assert.equal(up.seen[2].name, `${NAME}.`);
  assert.equal(u.stats.rejected.case - before.case, 2);
  assert.equal(u.stats.caseFallbacks - before.fallbacks, 1);
  assert.equal(u.caseRandomized, true, "one query is not enough to give 0x20 up");
  // Two more such queries in a row: 0x20 goes off for this upstream, and a query takes one try.
  await h.serve(makeRequest(NAME, Type.A));
  await h.serve(makeRequest(NAME, Type.A));
  assert.equal(u.caseRandomized, false);
  const seen = up.seen.length;
  assert.equal((await h.serve(makeRequest(NAME, Type.A))).rcode, Rcode.NOERROR);
  assert.equal(up.seen.length - seen, 1);
});

test("an upstream that echoes case keeps 0x20 after one forged-looking reply", async () => {
  let first = true;
  const up = await upstream((q) => {
    if (!first) return [answered(q)];
    first = false;
    return [lowered(q)];
  });
  const { f, h } = make(up.port);
  const reply = await h.serve(makeRequest(NAME, Type.A));
  assert.equal(reply.rcode, Rcode.NOERROR);
  assert.equal(up.seen.length, 2, "refused once, then taken in the new case");
  assert.notEqual(up.seen[1].port, up.seen[0].port);
  assert.notEqual(up.seen[1].name, up.seen[0].name, "asked again in another case");
  assert.equal(f.upstreams[0].caseRandomized, true);
});

test("forgeries are counted by reason, and logged once a minute per upstream, not once each", async () => {
  const forged = (q: Msg, id: number): Msg => ({ ...lowered(q), id, answer: [] });
  const up = await upstream((q) => [
    forged(q, q.id ^ 1),
    { ...answered(q), qr: false },
    { ...answered(q), question: [{ ...q.question[0], name: "other.example.org." }] },
    answered(q),
  ]);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "warn" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const { f, h } = make(up.port, {}, log);
  const s = f.upstreams[0].stats;
  for (let i = 0; i < 5; i++) assert.equal((await h.serve(makeRequest(NAME, Type.A))).rcode, Rcode.NOERROR);
  assert.deepEqual(s.rejected, { malformed: 0, id: 5, qr: 5, question: 5, case: 0 });
  const warned = lines.filter((l) => String(l.msg).startsWith("dropped packets"));
  assert.equal(warned.length, 1, JSON.stringify(lines));
  assert.deepEqual(warned[0].rejected, { id: 1 });
  assert.equal(warned[0].to, `127.0.0.1:${up.port}`);
});

test("at the cap on open UDP sockets a query is not sent, and the socket count comes back down", async () => {
  const silentUp = await upstream(() => []);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "warn" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const { h } = make(
    silentUp.port,
    { maxUdpSockets: 2, readTimeoutMs: 300, maxFails: 0, maxConnectAttempts: 1 },
    log,
  );
  const refused = forwardStats.udpSocketCapRefused;
  const held = [h.serve(makeRequest("a.example.org", Type.A)), h.serve(makeRequest("b.example.org", Type.A))];
  let heldOver = false;
  void Promise.all(held).then(() => (heldOver = true));
  // Both sockets are in use until the read timeout: the third query finds the cap at once.
  const third = await h.serve(makeRequest("c.example.org", Type.A));
  assert.equal(third.rcode, Rcode.SERVFAIL);
  assert.equal(heldOver, false, "refused without waiting for a socket");
  assert.equal(forwardStats.udpSocketCapRefused - refused, 1);
  assert.equal(lines.filter((l) => String(l.msg).startsWith("UDP sockets to upstreams")).length, 1);
  for (const r of await Promise.all(held)) assert.equal(r.rcode, Rcode.SERVFAIL);
  assert.equal(silentUp.seen.length, 2);
  // The timed-out queries closed their sockets: two more go out.
  await Promise.all([
    h.serve(makeRequest("d.example.org", Type.A)),
    h.serve(makeRequest("e.example.org", Type.A)),
  ]);
  assert.equal(silentUp.seen.length, 4);
  assert.equal(forwardStats.udpSocketCapRefused - refused, 1);
});
