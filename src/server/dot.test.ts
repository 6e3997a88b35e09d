// DNS over TLS (RFC 7858): a tls:// server block, asked by Knot's kdig (+tls) and by node:tls clients,
// with certificates from a throwaway CA made with openssl (test/upstream/tls-front.ts).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { execFile } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { kdig } from "../../test/helpers/kdig.ts";
import { dig } from "../../test/helpers/dig.ts";
import { freePort } from "../../test/helpers/free-port.ts";
import { ROOT, startServer, type RunningServer } from "../../test/helpers/server.ts";
import { makePki, type Pki } from "../../test/upstream/tls-front.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { exchangeTcp } from "../../test/helpers/tcp-exchange.ts";
import { httpGet } from "../../test/helpers/http-get.ts";
import { encode } from "../dns/encode.ts";
import { decode } from "../dns/decode.ts";
import { FrameReader } from "../dns/tcp-frames.ts";
import { Type } from "../dns/constants.ts";

let pki: Pki;
let other: Pki;
let srv: RunningServer;
let dot: number;
let verified: number;
let required: number;
let plain: number;

const ZONE =
  "$ORIGIN example.org.\n@ 300 IN SOA ns hostmaster 1 7200 3600 1209600 300\nwww 300 IN A 192.0.2.7\n";

before(async () => {
  pki = makePki();
  other = makePki();
  [dot, verified, required] = [await freePort(), await freePort(), await freePort()];
  const files = (p: Pki) => `${p.serverCert} ${p.serverKey}`;
  srv = await startServer(
    `. {\n    tls ${files(pki)}\n    file db.example example.org\n}\n` +
      `tls://.:${dot} {\n    tls ${files(pki)}\n    file db.example example.org\n}\n` +
      `tls://.:${verified} {\n    tls ${files(pki)} ${pki.ca} {\n        client_auth require_and_verify\n    }\n    whoami\n}\n` +
      `tls://.:${required} {\n    tls ${files(pki)} ${pki.ca} {\n        client_auth verify_if_given\n    }\n    whoami\n}\n`,
    { files: { "db.example": ZONE } },
  );
  plain = srv.ports[0];
});

after(async () => {
  assert.equal(await srv.stop(), 0);
});

test("kdig +tls gets the zone's answer over TLS, the certificate checked against the CA", async () => {
  const r = await kdig(dot, "www.example.org", "A", `+tls-ca=${pki.ca}`, "+tls-hostname=dns.test");
  assert.equal(r.status, "NOERROR", r.text);
  assert.deepEqual(r.records, ["www.example.org. 300 IN A 192.0.2.7"]);
  assert.match(r.sessions[0], /TLS session \(TLS1\.[23]\)/);
  // The same chain as plain DNS: the same answer on the plain port, and NXDOMAIN with the SOA.
  assert.deepEqual((await dig(plain, "www.example.org")).answer, ["www.example.org. 300 IN A 192.0.2.7"]);
  assert.equal((await kdig(dot, "nope.example.org", "A", "+tls")).status, "NXDOMAIN");
});

test("a CA that did not sign the server's certificate: kdig refuses the server", async () => {
  const r = await kdig(dot, "www.example.org", "A", `+tls-ca=${other.ca}`);
  assert.equal(r.status, "", r.text);
});

/** A TLS client to `port`: resolves with the connection once it is up, or the error. */
function connectTls(port: number, o: tls.ConnectionOptions = {}): Promise<tls.TLSSocket | Error> {
  return new Promise((resolve) => {
    const s = tls.connect({
      host: "127.0.0.1",
      port,
      ca: readFileSync(pki.ca),
      servername: "dns.test",
      ...o,
    });
    s.once("secureConnect", () => resolve(s));
    s.once("error", (err) => resolve(err));
  });
}

/** Sends the queries on the connection, back to back, and reads as many replies (or fewer if it closes). */
function exchange(s: tls.TLSSocket, names: string[]): Promise<string[]> {
  return new Promise((resolve) => {
    const got: string[] = [];
    const frames = new FrameReader();
    s.on("data", (chunk: Buffer) =>
      frames.push(chunk, (m) => {
        const msg = decode(m);
        got.push(`${msg.question[0].name} ${msg.answer.length}`);
        if (got.length === names.length) resolve(got);
        return true;
      }),
    );
    s.on("close", () => resolve(got));
    s.write(
      Buffer.concat(
        names.map((n) => {
          const q = encode(queryMsg(n, Type.A));
          return Buffer.concat([Buffer.from([q.length >> 8, q.length & 0xff]), q]);
        }),
      ),
    );
  });
}

test("pipelined queries on one TLS connection are all answered", async () => {
  const s = await connectTls(dot);
  assert.ok(s instanceof tls.TLSSocket, String(s));
  const names = Array.from({ length: 20 }, (_, i) => (i % 2 ? "www.example.org." : `n${i}.example.org.`));
  const got = await exchange(s, names);
  s.destroy();
  assert.equal(got.length, 20);
  assert.equal(got.filter((g) => g === "www.example.org. 1").length, 10);
});

test("client_auth require_and_verify: only a certificate the CA signed gets an answer", async () => {
  const withCert = (p: Pki) => ({ cert: readFileSync(p.clientCert), key: readFileSync(p.clientKey) });
  const good = await connectTls(verified, withCert(pki));
  assert.ok(good instanceof tls.TLSSocket, String(good));
  assert.equal((await exchange(good, ["a.example."])).length, 1);
  good.destroy();
  for (const o of [{}, withCert(other)]) {
    const s = await connectTls(verified, o);
    // TLS 1.3: the client learns of the refusal on its first read.
    const got = s instanceof tls.TLSSocket ? await exchange(s, ["a.example."]) : [];
    assert.deepEqual(got, []);
    if (s instanceof tls.TLSSocket) s.destroy();
  }
  const k = await kdig(
    verified,
    "a.example",
    "A",
    `+tls-ca=${pki.ca}`,
    `+tls-certfile=${pki.clientCert}`,
    `+tls-keyfile=${pki.clientKey}`,
  );
  assert.equal(k.status, "NOERROR", k.text);
});

test("client_auth verify_if_given: no certificate is fine, one from another CA is not", async () => {
  const none = await connectTls(required);
  assert.ok(none instanceof tls.TLSSocket);
  assert.equal((await exchange(none, ["a.example."])).length, 1);
  none.destroy();
  const bad = await connectTls(required, {
    cert: readFileSync(other.clientCert),
    key: readFileSync(other.clientKey),
  });
  const got = bad instanceof tls.TLSSocket ? await exchange(bad, ["a.example."]) : [];
  assert.deepEqual(got, []);
});

test("plain DNS sent to the TLS port gets no answer and the server keeps serving", async () => {
  const query = encode(queryMsg("www.example.org.", Type.A));
  assert.ok((await exchangeTcp(plain, query)) !== undefined, "the plain port answers it");
  const t0 = performance.now();
  assert.equal(await exchangeTcp(dot, query, 5000), undefined, "no DNS reply over plain TCP");
  assert.ok(performance.now() - t0 < 5000, "closed at once, not left to time out");
  // A client that connects and sends nothing is let go after the read timeout (3 s).
  const closed = await new Promise<boolean>((resolve) => {
    const s = net.connect(dot, "127.0.0.1");
    s.on("error", () => undefined);
    s.on("close", () => resolve(true));
    setTimeout(() => resolve(false), 10_000);
  });
  assert.ok(closed, "a silent connection is closed");
  const k = await kdig(dot, "www.example.org", "A", "+tls");
  assert.equal(k.status, "NOERROR");
});

test("the log says where a tls:// block listens, and what a tls in a dns:// block does", () => {
  const listening = srv.logs.filter((l) => l.msg === "listening").map((l) => l.server);
  assert.ok(listening.includes(`tls://:${dot}`), JSON.stringify(listening));
  // The tls of the plain block does nothing there, and a line says so with its place.
  const warned = srv.logs.find((l) => String(l.msg).includes("tls has no effect on a dns:// server block"));
  assert.ok(warned, "a warning about tls in a dns:// block");
  assert.match(String(warned.tls), /Corefile:2$/);
});

test("a reload with another certificate: new tls:// and https:// connections get it", async () => {
  const [t, h] = [await freePort(), await freePort()];
  const corefile = (p: Pki) =>
    `tls://.:${t} {\n    tls ${p.serverCert} ${p.serverKey}\n    whoami\n}\n` +
    `https://.:${h} {\n    tls ${p.serverCert} ${p.serverKey}\n    whoami\n}\n`;
  const s = await startServer(corefile(pki));
  try {
    const ask = (ca: string) =>
      Promise.all([
        kdig(t, "a.example", "A", `+tls-ca=${ca}`),
        kdig(h, "a.example", "A", "+https", `+tls-ca=${ca}`),
      ]);
    assert.deepEqual(
      (await ask(pki.ca)).map((r) => r.status),
      ["NOERROR", "NOERROR"],
    );
    writeFileSync(join(s.dir, "Corefile"), corefile(other));
    s.proc.kill("SIGUSR1");
    for (let i = 0; i < 200 && !s.logs.some((l) => l.msg === "reloaded"); i++) await sleep(50);
    assert.deepEqual(
      (await ask(other.ca)).map((r) => r.status),
      ["NOERROR", "NOERROR"],
      "the new CA's",
    );
    assert.deepEqual(
      (await ask(pki.ca)).map((r) => r.status),
      ["", ""],
      "not the old one's",
    );
  } finally {
    assert.equal(await s.stop(), 0);
  }
});

/** The first line python3-grpcio prints for one Query call to `port` ("status 0 OK", "status 14 ..."). */
async function grpcStatus(port: number, ca: string): Promise<string> {
  const client = join(ROOT, "test", "clients", "grpc_dns.py");
  const args = [client, "client", `127.0.0.1:${port}`, "a.example", "A", "--ca", ca, "--host", "dns.test"];
  const { stdout } = await promisify(execFile)("/usr/bin/python3", args, { timeout: 20_000 });
  return stdout.split("\n")[0];
}

test("a reload that turns client_auth on and the key log off holds for tls://, https:// and grpc://", async () => {
  const [t, h, g] = [await freePort(), await freePort(), await freePort()];
  const keys = join(pki.dir, "reload-keys.log");
  const corefile = (option: string) =>
    [`tls://.:${t}`, `https://.:${h}`, `grpc://.:${g}`]
      .map(
        (key) =>
          `${key} {\n    tls ${pki.serverCert} ${pki.serverKey} ${pki.ca} {\n        ${option}\n    }\n    whoami\n}\n`,
      )
      .join("");
  const s = await startServer(corefile(`keylog ${keys}`));
  const ask = async (...cert: string[]) => [
    (await kdig(t, "a.example", "A", `+tls-ca=${pki.ca}`, ...cert)).status,
    (await kdig(h, "a.example", "A", "+https", `+tls-ca=${pki.ca}`, ...cert)).status,
  ];
  try {
    assert.deepEqual(await ask(), ["NOERROR", "NOERROR"]);
    assert.equal(await grpcStatus(g, pki.ca), "status 0 OK");
    writeFileSync(join(s.dir, "Corefile"), corefile("client_auth require_and_verify"));
    s.proc.kill("SIGUSR1");
    for (let i = 0; i < 200 && !s.logs.some((l) => l.msg === "reloaded"); i++) await sleep(50);
    const logged = statSync(keys).size;
    assert.deepEqual(await ask(), ["", ""], "no client certificate: no answer");
    assert.match(await grpcStatus(g, pki.ca), /^status 14 /, "gRPC: UNAVAILABLE, the handshake refused");
    const cert = [`+tls-certfile=${pki.clientCert}`, `+tls-keyfile=${pki.clientKey}`];
    assert.deepEqual(await ask(...cert), ["NOERROR", "NOERROR"], "the CA's client certificate");
    assert.equal(statSync(keys).size, logged, "no TLS secrets written once keylog is gone");
  } finally {
    assert.equal(await s.stop(), 0);
  }
});

test("a reload that removes tls from a tls:// block serves plain TCP; adding tls to an https:// block is refused", async () => {
  const [t, h] = [await freePort(), await freePort()];
  const tlsLine = `    tls ${pki.serverCert} ${pki.serverKey}\n`;
  const corefile = (dot: string, doh: string) =>
    `tls://.:${t} {\n${dot}    whoami\n}\nhttps://.:${h} {\n${doh}    whoami\n}\n`;
  const s = await startServer(corefile(tlsLine, ""));
  const reload = async (text: string, n: number) => {
    writeFileSync(join(s.dir, "Corefile"), text);
    s.proc.kill("SIGUSR1");
    const done = () =>
      s.logs.filter((l) => /^reload: the new Corefile was rejected|^reloaded$/.test(String(l.msg)));
    for (let i = 0; i < 200 && done().length < n; i++) await sleep(50);
    return done()[n - 1];
  };
  const get = `/dns-query?dns=${encode(queryMsg("a.example.", Type.A)).toString("base64url")}`;
  try {
    assert.equal((await kdig(t, "a.example", "A", `+tls-ca=${pki.ca}`)).status, "NOERROR");
    assert.equal((await reload(corefile("", ""), 1)).msg, "reloaded");
    // As its start-up line says: DNS over plain TCP now, as a fresh start with this Corefile serves.
    assert.equal((await kdig(t, "a.example", "A", "+tcp")).status, "NOERROR");
    // An https:// listener cannot turn from plain HTTP to TLS in place: refused, with why.
    const refused = await reload(corefile("", tlsLine), 2);
    assert.match(String(refused.msg), /rejected/);
    assert.match(String(refused.error), new RegExp(`https://:${h}: .*add tls.*restart`));
    assert.equal((await httpGet(h, get)).status, 200, "the running configuration stays");
  } finally {
    assert.equal(await s.stop(), 0);
  }
});
