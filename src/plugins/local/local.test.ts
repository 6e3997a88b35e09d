import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { LOCAL_TTL } from "./local.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { freePort } from "../../../test/helpers/free-port.ts";
import { httpGet } from "../../../test/helpers/http-get.ts";
import { sample } from "../../../test/helpers/metrics.ts";
import { rrToText } from "../../dns/text.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

async function handler(block?: ReturnType<typeof dir>[]) {
  const plugin = await setup(dir("local", [], block), fakeContext().ctx);
  assert.ok(plugin);
  const next = recordingNext();
  return { h: plugin(next), next };
}

const SOA = (origin: string) =>
  `${origin}\t${LOCAL_TTL}\tIN\tSOA\tlocalhost. root.localhost. 1 0 0 0 ${LOCAL_TTL}`;

test("localhost., names under it and localhost.<domain>: the loopback addresses", async () => {
  const { h, next } = await handler();
  for (const name of [
    "localhost.",
    "app.localhost.",
    "a.b.localhost.",
    "localhost.default.svc.cluster.local.",
  ]) {
    const a = await h.serve(makeRequest(name, Type.A));
    assert.deepEqual(a.answer.map(rrToText), [`${name}\t${LOCAL_TTL}\tIN\tA\t127.0.0.1`], name);
    const aaaa = await h.serve(makeRequest(name, Type.AAAA));
    assert.deepEqual(aaaa.answer.map(rrToText), [`${name}\t${LOCAL_TTL}\tIN\tAAAA\t::1`], name);
    const mx = await h.serve(makeRequest(name, Type.MX));
    assert.deepEqual([mx.rcode, mx.answer.length], [Rcode.NOERROR, 0], `${name}: NODATA`);
    assert.equal(mx.authority.length, 1);
  }
  assert.equal(next.calls.length, 0);
});

test("the apexes: SOA, NS, NODATA; the loopback PTRs; NXDOMAIN below the reverse zones", async () => {
  const { h } = await handler();
  assert.deepEqual((await h.serve(makeRequest("localhost.", Type.SOA))).answer.map(rrToText), [
    SOA("localhost."),
  ]);
  assert.deepEqual((await h.serve(makeRequest("127.in-addr.arpa.", Type.NS))).answer.map(rrToText), [
    `127.in-addr.arpa.\t${LOCAL_TTL}\tIN\tNS\tlocalhost.`,
  ]);
  const a = await h.serve(makeRequest("0.in-addr.arpa.", Type.A));
  assert.deepEqual(
    [a.rcode, a.answer, a.authority.map(rrToText)],
    [Rcode.NOERROR, [], [SOA("0.in-addr.arpa.")]],
  );
  assert.deepEqual((await h.serve(makeRequest("1.0.0.127.in-addr.arpa.", Type.PTR))).answer.map(rrToText), [
    `1.0.0.127.in-addr.arpa.\t${LOCAL_TTL}\tIN\tPTR\tlocalhost.`,
  ]);
  const six = "1." + "0.".repeat(31) + "ip6.arpa.";
  assert.deepEqual((await h.serve(makeRequest(six, Type.PTR))).answer.map(rrToText), [
    `${six}\t${LOCAL_TTL}\tIN\tPTR\tlocalhost.`,
  ]);
  const nx = await h.serve(makeRequest("2.0.0.127.in-addr.arpa.", Type.PTR));
  assert.deepEqual([nx.rcode, nx.authority.map(rrToText)], [Rcode.NXDOMAIN, [SOA("127.in-addr.arpa.")]]);
  const bcast = await h.serve(makeRequest("255.255.255.255.in-addr.arpa.", Type.PTR));
  assert.equal(bcast.rcode, Rcode.NXDOMAIN);
});

test("other names, other ip6.arpa names and class CH pass on; localhost_prefix off", async () => {
  const { h, next } = await handler();
  for (const name of [
    "example.org.",
    "notlocalhost.",
    "localhostx.example.",
    "2." + "0.".repeat(31) + "ip6.arpa.",
  ]) {
    assert.equal((await h.serve(makeRequest(name, Type.A))).rcode, Rcode.REFUSED, name);
  }
  await h.serve(makeRequest("localhost.", Type.TXT, { qclass: Class.CH }));
  assert.equal(next.calls.length, 5);
  const off = await handler([dir("localhost_prefix", ["off"])]);
  assert.equal((await off.h.serve(makeRequest("localhost.example.org.", Type.A))).rcode, Rcode.REFUSED);
  assert.equal(
    (await off.h.serve(makeRequest("x.localhost.", Type.A))).answer.length,
    1,
    "RFC 6761 names stay",
  );
  assert.ok(off.h.lane?.kind === "answer");
});

test("setup: no arguments; localhost_prefix takes on or off, once", async () => {
  await assertConfigErrors(setup, [
    [dir("local", ["x"]), /^Corefile:3 - .*local.*takes 0 argument/],
    [dir("local", [], [dir("localhost_prefix", ["maybe"])]), /takes 'on' or 'off', got 'maybe'/],
    [dir("local", [], [dir("localhost_prefix")]), /takes 1 argument/],
    [dir("local", [], [dir("localhost_prefix", ["on"]), dir("localhost_prefix", ["off"])]), /given twice/],
    [dir("local", [], [dir("other")]), /unknown property 'other'/],
  ]);
});

test("end to end: dig gets the local answers (also replayed), the rest reaches the next plugin; the counter counts", async () => {
  const metrics = await freePort();
  const srv = await startServer(`. {
    prometheus 127.0.0.1:${metrics}
    local
    template ANY ANY {
        rcode REFUSED
    }
}
`);
  try {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual((await dig(srv.port, "LocalHost.", "A")).answer, [
        `LocalHost. ${LOCAL_TTL} IN A 127.0.0.1`,
      ]);
      assert.deepEqual((await dig(srv.port, "web.localhost", "AAAA")).answer, [
        `web.localhost. ${LOCAL_TTL} IN AAAA ::1`,
      ]);
      assert.deepEqual((await dig(srv.port, "1.0.0.127.in-addr.arpa", "PTR")).answer, [
        `1.0.0.127.in-addr.arpa. ${LOCAL_TTL} IN PTR localhost.`,
      ]);
      assert.deepEqual((await dig(srv.port, "1." + "0.".repeat(31) + "ip6.arpa", "PTR")).answer.length, 1);
      assert.equal((await dig(srv.port, "9.0.0.127.in-addr.arpa", "PTR")).status, "NXDOMAIN");
      assert.equal((await dig(srv.port, "example.org", "A")).status, "REFUSED", "passed on to template");
    }
    const body = (await httpGet(metrics, "/metrics")).body;
    // web.localhost twice; localhost. itself does not count.
    assert.equal(sample(body, "coredns_local_localhost_requests_total"), 2);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
