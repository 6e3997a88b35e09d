// forward to DNS-over-TLS upstreams: a node:tls front (test/upstream/tls-front.ts) ends TLS before a
// real DNS server, Debian's knotd (test/upstream/knot.ts).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import type { Handler } from "../../chain/handler.ts";
import { Forward } from "./forward.ts";
import { parseForward } from "./setup.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { startKnot, type Knot } from "../../../test/upstream/knot.ts";
import { makePki, startTlsFront, type Pki, type TlsFront } from "../../../test/upstream/tls-front.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { FrameReader } from "../../dns/tcp-frames.ts";
import { QUERY_BLOCK, asksPadding } from "../../dns/padding.ts";

let knot: Knot;
let pki: Pki;
let front: TlsFront;
let strict: TlsFront;
const forwards: Forward[] = [];

before(async () => {
  knot = await startKnot({ id: "dot" });
  pki = makePki();
  front = await startTlsFront(pki, knot.port);
  strict = await startTlsFront(pki, knot.port, { clientAuth: true });
});

after(async () => {
  for (const f of forwards) f.close();
  await Promise.all([front.close(), strict.close(), knot.stop()]);
});

/** A Forward from a forward directive's text; file names in it are relative to the PKI's folder. */
function make(text: string): { f: Forward; h: Handler } {
  const d = parseCorefile(`. {\n${text}\n}\n`, "Corefile")[0].directives[0];
  const f = new Forward({ ...parseForward(d, pki.dir), readTimeoutMs: 1000 }, pino({ level: "silent" }));
  forwards.push(f);
  return { f, h: f.handler(recordingNext()) };
}

async function who(h: Handler, proto: "udp" | "tcp" = "udp") {
  return h.serve(makeRequest("who.example.org", Type.TXT, { proto }));
}

test("tls:// with the CA and the server's name: answers over one TLS connection, reused", async () => {
  const before = front.connections;
  const { f, h } = make(
    `forward . tls://127.0.0.1:${front.port} {\n tls ca.crt\n tls_servername dns.test\n}`,
  );
  for (const proto of ["udp", "tcp", "udp"] as const) {
    const reply = await who(h, proto);
    assert.equal(reply.rcode, Rcode.NOERROR, proto);
    assert.deepEqual((reply.answer[0].data as { strings: string[] }).strings, ["dot"]);
  }
  assert.equal(
    front.connections - before,
    1,
    "every query, UDP or TCP from the client, on one TLS connection",
  );
  const s = f.upstreams[0].stats;
  assert.deepEqual([s.connCacheMisses["tcp-tls"], s.connCacheHits["tcp-tls"]], [1, 2]);
  assert.equal(f.upstreams[0].idleConnections("tcp-tls"), 1);
});

test("tls:// queries go out with an EDNS Padding option, padded to a multiple of 128 octets (RFC 8467 4.1)", async () => {
  const rec = await startTlsFront(pki, knot.port, { record: true });
  try {
    const { f, h } = make(
      `forward . tls://127.0.0.1:${rec.port} {\n tls ca.crt\n tls_servername dns.test\n}`,
    );
    for (const name of ["who.example.org", "a-much-longer-name-to-ask-for.who.example.org"]) {
      const reply = await h.serve(makeRequest(name, Type.TXT));
      assert.ok(reply.rcode === Rcode.NOERROR || reply.rcode === Rcode.NXDOMAIN, `knotd answered ${name}`);
    }
    f.close();
    const queries: Buffer[] = [];
    new FrameReader().push(Buffer.concat(rec.received.flat()), (m) => queries.push(Buffer.from(m)) > 0);
    assert.equal(queries.length, 2);
    for (const q of queries) {
      assert.equal(q.length % QUERY_BLOCK, 0, `${q.length} octets`);
      assert.ok(asksPadding(q), "the query carries a Padding option");
    }
  } finally {
    await rec.close();
  }
});

test("the certificate is checked: a wrong name, or no CA that signed it, gets no answer", async () => {
  for (const text of [
    `forward . tls://127.0.0.1:${front.port} {\n tls ca.crt\n tls_servername other.test\n}`,
    `forward . tls://127.0.0.1:${front.port} {\n tls_servername dns.test\n}`,
    `forward . tls://127.0.0.1:${front.port}`,
  ]) {
    const { h } = make(text);
    assert.equal((await who(h)).rcode, Rcode.SERVFAIL, text);
  }
  // Without tls_servername the address is the name checked: the certificate holds IP 127.0.0.1.
  const { h } = make(`forward . tls://127.0.0.1:${front.port} {\n tls ca.crt\n}`);
  assert.equal((await who(h)).rcode, Rcode.NOERROR);
});

test("tls CERT KEY CA: a client certificate for an upstream that asks for one", async () => {
  const withCert = make(`forward . tls://127.0.0.1:${strict.port} {\n tls client.crt client.key ca.crt\n}`);
  assert.equal((await who(withCert.h)).rcode, Rcode.NOERROR);
  const without = make(`forward . tls://127.0.0.1:${strict.port} {\n tls ca.crt\n}`);
  assert.equal((await who(without.h)).rcode, Rcode.SERVFAIL);
});

test("max_age: a connection older than that is not reused; a new one resumes the TLS session", async () => {
  const before = { connections: front.connections, resumed: front.resumed };
  const { h } = make(`forward . tls://127.0.0.1:${front.port} {\n tls ca.crt\n max_age 200ms\n}`);
  assert.equal((await who(h)).rcode, Rcode.NOERROR);
  assert.equal((await who(h)).rcode, Rcode.NOERROR);
  assert.equal(front.connections - before.connections, 1);
  await sleep(300);
  assert.equal((await who(h)).rcode, Rcode.NOERROR);
  assert.equal(front.connections - before.connections, 2, "reopened past max_age");
  assert.equal(front.resumed - before.resumed, 1, "with the session of the first");
});

test("end to end: dig gets Knot's answer through clusterdns over DNS over TLS", async () => {
  const srv = await startServer(
    `example.org {\n    forward . tls://127.0.0.1:${front.port} {\n        tls ${pki.ca}\n        tls_servername dns.test\n    }\n}\n`,
  );
  try {
    const r = await dig(srv.port, "www.example.org", "A");
    assert.equal(r.status, "NOERROR");
    assert.deepEqual(r.answer, ["www.example.org. 300 IN A 192.0.2.1"]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
