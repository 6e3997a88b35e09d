// EDNS(0) Padding (RFC 7830) on the encrypted listeners, as Knot's kdig sees it: a query over DNS over
// TLS or DNS over HTTPS that carries a Padding option gets a reply padded to a multiple of 468 octets
// (RFC 8467 4.1), replayed from the answer store or not; a query without the option, and any query
// over plain UDP, TCP or HTTP, gets no padding (RFC 7830 6).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { kdig, type KdigResult } from "../../test/helpers/kdig.ts";
import { freePort } from "../../test/helpers/free-port.ts";
import { httpGet } from "../../test/helpers/http-get.ts";
import { sample } from "../../test/helpers/metrics.ts";
import { startServer, type RunningServer } from "../../test/helpers/server.ts";
import { makePki, type Pki } from "../../test/upstream/tls-front.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { encode } from "../dns/encode.ts";
import { EdnsOption, Type } from "../dns/constants.ts";

let pki: Pki;
let srv: RunningServer;
let plain: number;
let dot: number;
let doh: number;
let plainHttp: number;
let metrics: number;
let signed: number;

const SECRET = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";

const ZONE =
  "$ORIGIN example.org.\n@ 300 IN SOA ns hostmaster 1 7200 3600 1209600 300\nwww 300 IN A 192.0.2.7\n" +
  Array.from({ length: 400 }, (_, i) => `host-${i} 300 IN A 10.0.${i >> 8}.${i & 255}\n`).join("") +
  "big 300 IN TXT " +
  Array.from({ length: 6 }, (_, i) => `"${String(i).repeat(200)}"`).join(" ") +
  "\n";

before(async () => {
  pki = makePki();
  [dot, doh, plainHttp, metrics, signed] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const cert = `    tls ${pki.serverCert} ${pki.serverKey}\n`;
  const zone = "    file db.example example.org\n";
  srv = await startServer(
    `. {\n${zone}}\n` +
      `tls://.:${dot} {\n${cert}    prometheus 127.0.0.1:${metrics}\n${zone}    transfer {\n        to *\n    }\n}\n` +
      `https://.:${doh} {\n${cert}${zone}}\n` +
      `https://.:${plainHttp} {\n${zone}}\n` +
      `tls://.:${signed} {\n${cert}    tsig {\n        secret key. ${SECRET}\n    }\n${zone}}\n`,
    { files: { "db.example": ZONE } },
  );
  plain = srv.ports[0];
});

after(async () => {
  const logs = srv.logs;
  assert.equal(await srv.stop(), 0, JSON.stringify(logs.slice(-5)));
});

/** The reply's size and its Padding option's, as kdig prints them (-1: no Padding option). */
function sizes(r: KdigResult): { size: number; padding: number } {
  const size = Number(/;; Received (\d+) B/.exec(r.text)?.[1] ?? NaN);
  const padding = Number(/;; PADDING: (\d+) B/.exec(r.text)?.[1] ?? -1);
  return { size, padding };
}

const TLS = () => [`+tls-ca=${pki.ca}`, "+tls-hostname=dns.test"];

test("DoT: a query with +padding gets a reply of 468 octets with a Padding option", async () => {
  const r = await kdig(dot, "www.example.org", "A", ...TLS(), "+padding");
  assert.equal(r.status, "NOERROR", r.text);
  assert.deepEqual(r.records, ["www.example.org. 300 IN A 192.0.2.7"]);
  const { size, padding } = sizes(r);
  assert.equal(size, 468, r.text);
  assert.ok(padding > 0, r.text);
});

test("DoT: a reply longer than one block is padded to the next multiple of 468", async () => {
  const r = await kdig(dot, "big.example.org", "TXT", ...TLS(), "+padding");
  assert.equal(r.status, "NOERROR", r.text);
  const { size, padding } = sizes(r);
  assert.ok(size > 468 && size % 468 === 0, r.text);
  assert.ok(padding >= 0, r.text);
});

test("DoT: the same answer replayed from the answer store is padded the same way", async () => {
  const hits = async () =>
    sample((await httpGet(metrics, "/metrics")).body, "clusterdns_answer_cache_hits_total") ?? 0;
  await kdig(dot, "www.example.org", "A", ...TLS(), "+nopadding");
  const before = await hits();
  const r = await kdig(dot, "www.example.org", "A", ...TLS(), "+padding");
  assert.ok((await hits()) > before, "the second query was answered from the answer store");
  assert.deepEqual(r.records, ["www.example.org. 300 IN A 192.0.2.7"]);
  assert.equal(sizes(r).size, 468, r.text);
  // And what the store holds stays unpadded: the same name over plain UDP next.
  const udp = await kdig(plain, "www.example.org", "A", "+padding");
  assert.deepEqual(udp.records, ["www.example.org. 300 IN A 192.0.2.7"]);
  assert.ok(sizes(udp).size < 100, udp.text);
});

test("DoT: every message of a zone transfer is padded to a multiple of 468", async () => {
  const r = await kdig(dot, "example.org", "AXFR", ...TLS(), "+padding");
  const m = /;; Received (\d+) B \((\d+) messages, (\d+) records\)/.exec(r.text);
  assert.ok(m !== null, r.text);
  const [size, messages, records] = [Number(m[1]), Number(m[2]), Number(m[3])];
  assert.ok(messages > 1 && records === 404, r.text);
  assert.equal(size % 468, 0, r.text);
});

test("DoT: a query without a Padding option gets no padding", async () => {
  // kdig pads its queries over TLS unless told not to.
  const r = await kdig(dot, "www.example.org", "A", ...TLS(), "+nopadding");
  assert.equal(r.status, "NOERROR", r.text);
  const { size, padding } = sizes(r);
  assert.equal(padding, -1, r.text);
  assert.ok(size < 100, r.text);
});

test("plain UDP and TCP: +padding gets no padding (RFC 7830 6)", async () => {
  for (const transport of ["+notcp", "+tcp"]) {
    // +qr prints the query too: its Padding option is the one kdig shows.
    const r = await kdig(plain, "www.example.org", "A", transport, "+padding", "+qr");
    assert.equal(r.status, "NOERROR", r.text);
    assert.equal(r.text.match(/;; PADDING:/g)?.length, 1, r.text);
    assert.ok(r.text.indexOf(";; PADDING:") < r.text.indexOf(";; Received"), r.text);
    assert.ok(sizes(r).size < 100, r.text);
  }
});

test("DoH (POST and GET): +padding gets a reply padded to 468 octets; none without it", async () => {
  for (const method of ["+https", "+https-get"]) {
    const r = await kdig(doh, "www.example.org", "A", method, ...TLS(), "+padding");
    assert.equal(r.status, "NOERROR", r.text);
    assert.deepEqual(r.records, ["www.example.org. 300 IN A 192.0.2.7"]);
    assert.equal(sizes(r).size, 468, r.text);
    assert.ok(sizes(r).padding > 0, r.text);
  }
  const r = await kdig(doh, "www.example.org", "A", "+https", ...TLS(), "+nopadding");
  assert.equal(sizes(r).padding, -1, r.text);
});

test("DoH over plain HTTP (no tls directive): no padding", async () => {
  // www.example.org A with an OPT record that carries an empty Padding option.
  const edns = {
    udpSize: 1232,
    version: 0,
    do: false,
    options: [{ code: EdnsOption.PADDING, data: new Uint8Array() }],
  };
  const query = encode(queryMsg("www.example.org.", Type.A, { edns }));
  const res = await fetch(`http://127.0.0.1:${plainHttp}/dns-query?dns=${query.toString("base64url")}`);
  assert.equal(res.status, 200);
  const reply = Buffer.from(await res.arrayBuffer());
  assert.equal(reply[3] & 0x0f, 0, "NOERROR");
  assert.ok(reply.length < 100, `${reply.length} octets`);
});

test("DoT with TSIG: the reply is padded before it is signed, and kdig verifies the signature", async () => {
  const key = `-y hmac-sha256:key.:${SECRET}`.split(" ");
  const r = await kdig(signed, "www.example.org", "A", ...TLS(), "+padding", ...key);
  assert.equal(r.status, "NOERROR", r.text);
  assert.deepEqual(r.records.slice(0, 1), ["www.example.org. 300 IN A 192.0.2.7"]);
  assert.match(r.text, /TSIG PSEUDOSECTION/, r.text);
  // kdig checks the reply's MAC, and says so on stderr when it does not match.
  assert.equal(r.stderr, "", r.stderr);
  // Padded so that the message with its TSIG record is one block.
  assert.equal(sizes(r).size, 468, r.text);
  assert.ok(sizes(r).padding > 0, r.text);
});
