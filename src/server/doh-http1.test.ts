// DNS over HTTPS to HTTP/1.1 clients (curl --http1.1, older stub resolvers): the `timeouts` of the
// block hold for them as for HTTP/2 and DoT, over TLS (ALPN http/1.1) and on a block without tls.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../../test/helpers/free-port.ts";
import { startServer, type RunningServer } from "../../test/helpers/server.ts";
import { makePki, type Pki } from "../../test/upstream/tls-front.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { encode } from "../dns/encode.ts";
import { Type } from "../dns/constants.ts";

let pki: Pki;
let srv: RunningServer;
let secure: number;
let plain: number;

const ZONE =
  "$ORIGIN example.org.\n@ 300 IN SOA ns hostmaster 1 7200 3600 1209600 60\nwww 300 IN A 192.0.2.7\n";
const TIMEOUTS = "    timeouts {\n        read 1s\n        idle 8s\n    }\n";

before(async () => {
  pki = makePki();
  [secure, plain] = [await freePort(), await freePort()];
  srv = await startServer(
    `https://.:${secure} {\n    tls ${pki.serverCert} ${pki.serverKey}\n${TIMEOUTS}    file db.example example.org\n}\n` +
      `https://.:${plain} {\n${TIMEOUTS}    file db.example example.org\n}\n`,
    { files: { "db.example": ZONE } },
  );
});

after(async () => {
  assert.equal(await srv.stop(), 0);
});

/** An HTTP/1.1 connection to the port: over TLS (ALPN http/1.1) to the tls block, plain to the other. */
function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s =
      port === secure
        ? tls.connect({
            host: "127.0.0.1",
            port,
            ca: readFileSync(pki.ca),
            servername: "dns.test",
            ALPNProtocols: ["http/1.1"],
          })
        : net.connect(port, "127.0.0.1");
    s.once(port === secure ? "secureConnect" : "connect", () => resolve(s));
    s.once("error", reject);
  });
}

/** Everything the connection sends until `ms` have passed or it closes, and when it closed (ms). */
function watch(s: net.Socket, ms: number): Promise<{ text: string; closedAt?: number }> {
  const t0 = performance.now();
  let text = "";
  s.on("data", (d: Buffer) => (text += d.toString("latin1")));
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ text }), ms);
    s.once("close", () => {
      clearTimeout(timer);
      resolve({ text, closedAt: performance.now() - t0 });
    });
  });
}

const GET = `GET /dns-query?dns=${encode(queryMsg("www.example.org.", Type.A)).toString("base64url")} HTTP/1.1\r\nHost: dns.test\r\n\r\n`;

test("HTTP/1.1 keep-alive lasts the block's idle timeout, not Node's 5 s", async () => {
  // Both at once: each takes 15 s.
  await Promise.all(
    [secure, plain].map(async (port) => {
      const s = await connect(port);
      const seen = watch(s, 17_000);
      s.write(GET);
      await sleep(6500);
      if (!s.destroyed) s.write(GET);
      const { text, closedAt } = await seen;
      s.destroy();
      const what = port === secure ? "over TLS" : "plain";
      assert.match(text, /Keep-Alive: timeout=8\r\n/, what);
      assert.equal(
        text.match(/HTTP\/1\.1 200 OK/g)?.length,
        2,
        `${what}: the second query after 6.5 s is answered`,
      );
      const idle = (closedAt ?? Infinity) - 6500;
      assert.ok(idle > 7000 && idle < 10_000, `${what}: closed ${idle} ms after its last query (idle 8 s)`);
    }),
  );
});

test("HTTP/1.1 headers trickled in are cut after the read timeout", async () => {
  const cut = await Promise.all(
    [secure, plain].map(async (port) => {
      const s = await connect(port);
      s.write("GET /dns-query?dns=AAAA HTTP/1.1\r\n");
      const timer = setInterval(() => !s.destroyed && s.write("X-Slow: 1\r\n"), 300);
      const { closedAt } = await watch(s, 10_000);
      clearInterval(timer);
      s.destroy();
      return closedAt;
    }),
  );
  for (const [i, at] of cut.entries())
    assert.ok(
      at !== undefined && at < 3000,
      `${i === 0 ? "over TLS" : "plain"}: cut after ${at} ms (read 1 s)`,
    );
});

test("HTTP/1.1: a GET whose ?dns= is 40,000 characters (a query with a 30,000-octet option) is answered, as over HTTP/2", async () => {
  const q = queryMsg("www.example.org.", Type.A);
  q.edns = { udpSize: 1232, version: 0, do: false, options: [{ code: 65001, data: new Uint8Array(30_000) }] };
  const long = `GET /dns-query?dns=${encode(q).toString("base64url")} HTTP/1.1\r\nHost: dns.test\r\nConnection: close\r\n\r\n`;
  for (const port of [secure, plain]) {
    const s = await connect(port);
    const seen = watch(s, 5000);
    s.write(long);
    const { text } = await seen;
    s.destroy();
    assert.match(
      text,
      /^HTTP\/1\.1 200 OK\r\n/,
      `${port === secure ? "over TLS" : "plain"}: ${text.slice(0, 60)}`,
    );
  }
});
