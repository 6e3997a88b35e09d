// DNS over HTTPS (RFC 8484): an https:// server block, asked by Knot's kdig (+https: HTTP/2, POST and
// GET) and by node:http2 and node:https clients for what kdig cannot send: malformed requests, which
// get HTTP statuses, and HTTP/1.1.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import { readFileSync } from "node:fs";
import { kdig } from "../../test/helpers/kdig.ts";
import { freePort } from "../../test/helpers/free-port.ts";
import { httpGet } from "../../test/helpers/http-get.ts";
import { startServer, type RunningServer } from "../../test/helpers/server.ts";
import { makePki, type Pki } from "../../test/upstream/tls-front.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { encode } from "../dns/encode.ts";
import { decode } from "../dns/decode.ts";
import { Rcode, Type } from "../dns/constants.ts";

let pki: Pki;
let srv: RunningServer;
let doh: number;
let plainHttp: number;
let metrics: number;

const ZONE =
  "$ORIGIN example.org.\n@ 300 IN SOA ns hostmaster 1 7200 3600 1209600 60\nwww 300 IN A 192.0.2.7\n";

before(async () => {
  pki = makePki();
  [doh, plainHttp, metrics] = [await freePort(), await freePort(), await freePort()];
  srv = await startServer(
    `https://.:${doh} {\n    tls ${pki.serverCert} ${pki.serverKey}\n    prometheus 127.0.0.1:${metrics}\n    file db.example example.org\n}\n` +
      `https://.:${plainHttp} {\n    file db.example example.org\n}\n`,
    { files: { "db.example": ZONE } },
  );
});

after(async () => {
  const logs = srv.logs;
  const code = await srv.stop();
  assert.equal(code, 0, JSON.stringify(logs.slice(-5)));
});

test("kdig +https (HTTP/2 POST) and +https-get: the zone's answers", async () => {
  for (const method of ["+https", "+https-get"]) {
    const r = await kdig(doh, "www.example.org", "A", method, `+tls-ca=${pki.ca}`, "+tls-hostname=dns.test");
    assert.equal(r.status, "NOERROR", r.text);
    assert.deepEqual(r.records, ["www.example.org. 300 IN A 192.0.2.7"]);
    assert.match(
      r.sessions.join("\n"),
      new RegExp(`HTTP/2-${method === "+https" ? "POST" : "GET"}.*status: 200`),
    );
  }
  assert.equal((await kdig(doh, "nope.example.org", "A", "+https", `+tls-ca=${pki.ca}`)).status, "NXDOMAIN");
});

interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTP/2 request to the DoH port. */
async function h2(
  path: string,
  o: { method?: string; type?: string; body?: Buffer } = {},
): Promise<HttpReply> {
  const session = http2.connect(`https://127.0.0.1:${doh}`, {
    ca: readFileSync(pki.ca),
    servername: "dns.test",
  });
  try {
    return await new Promise<HttpReply>((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = { ":method": o.method ?? "GET", ":path": path };
      if (o.type !== undefined) headers["content-type"] = o.type;
      const req = session.request(headers);
      const parts: Buffer[] = [];
      let status = 0;
      let got: HttpReply["headers"] = {};
      req.on("response", (h) => {
        status = Number(h[":status"]);
        got = h;
      });
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => resolve({ status, headers: got, body: Buffer.concat(parts) }));
      req.on("error", reject);
      req.end(o.body);
    });
  } finally {
    session.close();
  }
}

const query = (name: string) => encode({ ...queryMsg(name, Type.A), id: 0 });

test("GET and POST over HTTP/2: the reply, its media type and a max-age from its TTLs", async () => {
  const get = await h2(`/dns-query?dns=${query("www.example.org.").toString("base64url")}`);
  assert.equal(get.status, 200);
  assert.equal(get.headers["content-type"], "application/dns-message");
  assert.equal(get.headers["cache-control"], "max-age=300");
  assert.equal(decode(get.body).answer[0].name, "www.example.org.");
  const post = await h2("/dns-query", {
    method: "POST",
    type: "application/dns-message",
    body: query("x.example.org."),
  });
  assert.equal(post.status, 200);
  assert.equal(decode(post.body).rcode, Rcode.NXDOMAIN);
  assert.equal(post.headers["cache-control"], "max-age=60", "a denial: its SOA's minimum");
});

test("malformed DoH requests get clear HTTP statuses, and the server keeps answering", async () => {
  const q = query("www.example.org.");
  const cases: [string, Promise<HttpReply>, number][] = [
    ["bad base64url", h2("/dns-query?dns=!!not*base64"), 400],
    ["no dns parameter", h2("/dns-query"), 400],
    ["two dns parameters", h2(`/dns-query?dns=${q.toString("base64url")}&dns=AAAA`), 400],
    ["too short to be DNS", h2("/dns-query?dns=AAAA"), 400],
    [
      "a response, not a query",
      h2(
        `/dns-query?dns=${Buffer.concat([q.subarray(0, 2), Buffer.from([0x80]), q.subarray(3)]).toString("base64url")}`,
      ),
      400,
    ],
    ["wrong media type", h2("/dns-query", { method: "POST", type: "text/plain", body: q }), 415],
    ["no media type", h2("/dns-query", { method: "POST", body: q }), 415],
    [
      "body too large",
      h2("/dns-query", { method: "POST", type: "application/dns-message", body: Buffer.alloc(70_000) }),
      413,
    ],
    ["another path", h2(`/other?dns=${q.toString("base64url")}`), 404],
    ["another method", h2("/dns-query", { method: "PUT", type: "application/dns-message", body: q }), 405],
  ];
  for (const [what, reply, status] of cases) {
    const r = await reply;
    assert.equal(r.status, status, `${what}: ${r.body.toString()}`);
    assert.match(String(r.headers["content-type"]), /^text\/plain/, what);
  }
  const ok = await h2(`/dns-query?dns=${q.toString("base64url")}`);
  assert.equal(ok.status, 200);
  // CoreDNS's coredns_dns_https_responses_total counts them by status (subsystem "dns", as the other
  // per-query series).
  const text = (await httpGet(metrics, "/metrics")).body;
  const count = (status: number) =>
    new RegExp(
      `coredns_dns_https_responses_total\\{server="https://:${doh}",status="${status}"\\} (\\d+)`,
    ).exec(text)?.[1];
  assert.equal(count(415), "2", text);
  assert.equal(count(413), "1");
  assert.equal(count(404), "1");
});

/** One HTTP/1.1 request: over TLS to the DoH port, or plain to the block without `tls`. */
function h1(secure: boolean, path: string): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const o = {
      host: "127.0.0.1",
      port: secure ? doh : plainHttp,
      path,
      ca: readFileSync(pki.ca),
      servername: "dns.test",
    };
    const req = (secure ? https : http).get(o, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }),
      );
    });
    req.on("error", reject);
  });
}

test("HTTP/1.1 clients: over TLS (no h2 in ALPN), and plain HTTP on a block without tls", async () => {
  const path = `/dns-query?dns=${query("www.example.org.").toString("base64url")}`;
  for (const secure of [true, false]) {
    const r = await h1(secure, path);
    assert.equal(r.status, 200, `secure=${secure}`);
    assert.equal((decode(r.body).answer[0].data as { address: string }).address, "192.0.2.7");
  }
  const warned = srv.logs.some((l) => String(l.msg).includes("DoH is served over plain HTTP/1.1"));
  assert.ok(warned, "a line says the block without tls is served unencrypted");
});

test("a POST whose body never ends is cut after read + write (8 s), and the connection serves on", async () => {
  const session = http2.connect(`https://127.0.0.1:${doh}`, {
    ca: readFileSync(pki.ca),
    servername: "dns.test",
  });
  try {
    const t0 = performance.now();
    const ended = await new Promise<string>((resolve) => {
      const req = session.request({
        ":method": "POST",
        ":path": "/dns-query",
        "content-type": "application/dns-message",
      });
      req.write(Buffer.alloc(5));
      req.on("response", (h) => resolve(`status ${String(h[":status"])}`));
      req.on("close", () => resolve(`reset ${req.rstCode}`));
      req.on("error", () => undefined);
      setTimeout(() => resolve("still open"), 20_000).unref();
    });
    assert.equal(ended, `reset ${http2.constants.NGHTTP2_CANCEL}`);
    assert.ok(performance.now() - t0 >= 7000, "not before its time");
    const q = query("www.example.org.");
    const ok = await new Promise<number>((resolve, reject) => {
      const req = session.request({ ":method": "GET", ":path": `/dns-query?dns=${q.toString("base64url")}` });
      req.on("response", (h) => resolve(Number(h[":status"])));
      req.on("error", reject);
      req.end();
    });
    assert.equal(ok, 200);
  } finally {
    session.close();
  }
});
