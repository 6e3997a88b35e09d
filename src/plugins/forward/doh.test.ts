// forward to DNS-over-HTTPS upstreams: Debian's unbound serving DoH (HTTP/2, test/upstream/unbound-doh.ts)
// with a certificate from a throwaway CA, asked with POST and with GET (doh_method); which method went
// out is read from the request itself, through a TLS front to unbound serving HTTP/2 in cleartext.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Handler } from "../../chain/handler.ts";
import { Forward } from "./forward.ts";
import { parseForward } from "./setup.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import http2 from "node:http2";
import net from "node:net";
import { decode } from "../../dns/decode.ts";
import { QUERY_BLOCK, asksPadding } from "../../dns/padding.ts";
import { makePki, startTlsFront, type Pki } from "../../../test/upstream/tls-front.ts";
import { startUnboundDoh, type UnboundDoh } from "../../../test/upstream/unbound-doh.ts";
import { startSilentRelay } from "../../../test/upstream/silent-relay.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { freePort } from "../../../test/helpers/free-port.ts";

let pki: Pki;
let unbound: UnboundDoh;
const forwards: Forward[] = [];

before(async () => {
  pki = makePki();
  unbound = await startUnboundDoh(pki);
});

after(async () => {
  for (const f of forwards) f.close();
  await unbound.stop();
});

function make(text: string): { f: Forward; h: Handler } {
  const d = parseCorefile(`. {\n${text}\n}\n`, "Corefile")[0].directives[0];
  const f = new Forward({ ...parseForward(d, pki.dir), readTimeoutMs: 2000 }, pino({ level: "silent" }));
  forwards.push(f);
  return { f, h: f.handler(recordingNext()) };
}

async function who(h: Handler, proto: "udp" | "tcp" = "udp") {
  return h.serve(makeRequest("who.example.org", Type.TXT, { proto }));
}

test("https:// with POST (the default) and GET: unbound's answer, over one HTTP/2 connection", async () => {
  for (const method of ["", "\n doh_method GET"]) {
    const { f, h } = make(
      `forward . https://127.0.0.1:${unbound.port} {\n tls ca.crt\n tls_servername dns.test${method}\n}`,
    );
    // The counters are the upstream's (by address), shared by both rounds.
    const s = f.upstreams[0].stats;
    const was = [s.connCacheMisses.https, s.connCacheHits.https];
    for (const proto of ["udp", "tcp", "udp"] as const) {
      const reply = await who(h, proto);
      assert.equal(reply.rcode, Rcode.NOERROR, `${method} ${proto}: ${unbound.log()}`);
      assert.deepEqual((reply.answer[0].data as { strings: string[] }).strings, ["unbound-doh"]);
    }
    const now = [s.connCacheMisses.https - was[0], s.connCacheHits.https - was[1]];
    assert.deepEqual(now, [1, 2], "one connection, reused");
  }
});

test("the certificate is checked: another name, or no CA that signed it, gets SERVFAIL", async () => {
  for (const text of [
    `forward . https://127.0.0.1:${unbound.port} {\n tls ca.crt\n tls_servername other.test\n}`,
    `forward . https://127.0.0.1:${unbound.port}`,
  ]) {
    const { h } = make(text);
    assert.equal((await who(h)).rcode, Rcode.SERVFAIL, text);
  }
  // Without tls_servername the address is the name checked: the certificate holds IP 127.0.0.1.
  const { h } = make(`forward . https://127.0.0.1:${unbound.port} {\n tls ca.crt\n}`);
  assert.equal((await who(h)).rcode, Rcode.NOERROR);
});

test("an upstream that is not there: SERVFAIL, the health checks mark it down", async () => {
  const port = await freePort();
  const { f, h } = make(
    `forward . https://127.0.0.1:${port} {\n tls ca.crt\n max_fails 1\n health_check 50ms\n}`,
  );
  assert.equal((await who(h)).rcode, Rcode.SERVFAIL);
  for (let i = 0; i < 100 && !f.upstreams[0].down; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(f.upstreams[0].down);
});

test("setup: https:// takes port 443 by default and no path; doh_method is GET or POST", () => {
  const o = parseForward(
    parseCorefile(". {\n forward . https://192.0.2.1\n}\n", "Corefile")[0].directives[0],
    "/",
  );
  assert.deepEqual(o.to, [{ host: "192.0.2.1", port: 443, to: "192.0.2.1:443", https: true }]);
  assert.equal(o.dohMethod, "POST");
  const bad = (text: string, re: RegExp) =>
    assert.throws(
      () => parseForward(parseCorefile(`. {\n${text}\n}\n`, "Corefile")[0].directives[0], "/"),
      re,
    );
  bad("forward . https://192.0.2.1/dns-query", /Corefile:2 .*no path in an https:\/\/ upstream/);
  bad("forward . 192.0.2.1 {\n doh_method PUT\n}", /Corefile:3 .*doh_method must be either POST or GET/);
  bad("forward . grpc://192.0.2.1", /DNS-over-gRPC \(grpc:\/\/\) is not supported/);
});

test("end to end: dig gets unbound's answer through clusterdns over DNS over HTTPS", async () => {
  const srv = await startServer(
    `example.org {\n    forward . https://127.0.0.1:${unbound.port} {\n        tls ${pki.ca}\n        tls_servername dns.test\n    }\n}\n`,
  );
  try {
    const r = await dig(srv.port, "who.example.org", "TXT");
    assert.equal(r.status, "NOERROR");
    assert.deepEqual(r.answer, ['who.example.org. 60 IN TXT "unbound-doh"']);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

/** The method and path of each request a client sent on one HTTP/2 connection, read by Node's own
 * HTTP/2 server from the bytes as they came (the connection preface, SETTINGS, HEADERS...). */
async function requestLines(bytes: Buffer): Promise<string[]> {
  const lines: string[] = [];
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    lines.push(`${String(headers[":method"])} ${String(headers[":path"])}`);
    stream.close(http2.constants.NGHTTP2_CANCEL);
  });
  // Every byte read once the client's side ends: the session is done.
  server.on("session", (s) => s.socket.once("end", () => s.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sock = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
  sock.on("error", () => {});
  // What the server says back is not needed, but must be read for the close to come.
  sock.resume();
  sock.end(bytes);
  await new Promise((r) => sock.once("close", r));
  await new Promise((r) => server.close(r));
  return lines;
}

test("doh_method GET sends GET /dns-query?dns=... to unbound, POST by default (the request lines seen)", async () => {
  // unbound serves HTTP/2 in cleartext behind a TLS front that keeps what clusterdns sent.
  const plain = await startUnboundDoh(pki, "unbound-behind", true);
  const front = await startTlsFront(pki, plain.port, { alpn: ["h2"], record: true });
  try {
    for (const [method, want] of [
      ["", /^POST \/dns-query$/],
      ["\n doh_method GET", /^GET \/dns-query\?dns=[A-Za-z0-9_-]+$/],
    ] as const) {
      const { f, h } = make(
        `forward . https://127.0.0.1:${front.port} {\n tls ca.crt\n tls_servername dns.test${method}\n}`,
      );
      const reply = await who(h);
      assert.equal(reply.rcode, Rcode.NOERROR, plain.log());
      assert.deepEqual((reply.answer[0].data as { strings: string[] }).strings, ["unbound-behind"]);
      f.close();
      const lines = await requestLines(Buffer.concat(front.received.at(-1)!));
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.match(lines[0], want);
      if (method !== "") {
        // RFC 8484 4.1: base64url without padding of the query, whose ID is 0.
        const q = Buffer.from(lines[0].split("?dns=")[1], "base64url");
        assert.equal(q.readUInt16BE(0), 0);
        assert.equal(decode(q).question[0].name, "who.example.org.");
        // RFC 8467 4.1: padded to a multiple of 128 octets with an EDNS Padding option.
        assert.equal(q.length % QUERY_BLOCK, 0, `${q.length} octets`);
        assert.ok(asksPadding(q));
      }
    }
  } finally {
    await front.close();
    await plain.stop();
  }
});

test("a DoH connection whose far end went silent is probed after a timed-out try, closed, and replaced", async () => {
  const relay = await startSilentRelay(unbound.port);
  try {
    const { f, h } = make(
      `forward . https://127.0.0.1:${relay.port} {\n tls ca.crt\n tls_servername dns.test\n max_fails 0\n}`,
    );
    assert.equal((await who(h)).rcode, Rcode.NOERROR);
    relay.silent = true;
    assert.equal((await who(h)).rcode, Rcode.SERVFAIL, "the try timed out");
    // Its PING goes unanswered: the connection is closed (the relay sees the client close it).
    for (let i = 0; i < 100 && relay.closedByClient === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(relay.closedByClient >= 1);
    relay.silent = false;
    assert.equal((await who(h)).rcode, Rcode.NOERROR, "on a new connection");
    // 2, or 3 when a retry of the timed-out query opened one more before the probe closed the first
    // (that one is probed in turn): without the probe every query stays on the first, silent or not.
    assert.ok(relay.opened >= 2, `connections opened: ${relay.opened}`);
    f.close();
  } finally {
    await relay.close();
  }
});
