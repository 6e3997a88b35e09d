import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { configErrorLike } from "../../../test/helpers/config-errors.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

const { ctx } = fakeContext();

async function handler() {
  const plugin = await setup(dir("whoami"), ctx);
  assert.ok(plugin);
  const next = recordingNext();
  return { h: plugin(next), next };
}

test("IPv4 client over UDP: A and _udp SRV in additional, empty answer, private", async () => {
  const { h, next } = await handler();
  const req = makeRequest("Example.org", Type.A, { remoteAddress: "10.1.2.3", remotePort: 40212 });
  assert.equal(req.cache.private, false);
  const m = await h.serve(req);
  assert.equal(m.rcode, Rcode.NOERROR);
  assert.equal(m.aa, true);
  assert.equal(m.answer.length, 0);
  assert.deepEqual(m.additional, [
    {
      name: "example.org.",
      type: Type.A,
      class: Class.IN,
      ttl: 0,
      data: { type: Type.A, address: "10.1.2.3" },
    },
    {
      name: "_udp.example.org.",
      type: Type.SRV,
      class: Class.IN,
      ttl: 0,
      data: { type: Type.SRV, priority: 0, weight: 0, port: 40212, target: "." },
    },
  ]);
  assert.equal(req.cache.private, true);
  assert.equal(req.answeredBy, "whoami");
  assert.equal(next.calls.length, 0);
});

test("IPv6 client over TCP: AAAA and _tcp SRV; any qtype is answered", async () => {
  const { h } = await handler();
  const req = makeRequest("a.test", Type.MX, { remoteAddress: "fd00::5", remotePort: 5353, proto: "tcp" });
  const m = await h.serve(req);
  assert.equal(m.additional[0].type, Type.AAAA);
  assert.deepEqual(m.additional[0].data, { type: Type.AAAA, address: "fd00::5" });
  assert.equal(m.additional[1].name, "_tcp.a.test.");
  assert.equal((m.additional[1].data as { port: number }).port, 5353);
});

test("IPv4-mapped client address is answered with an A; the root name gets _udp.", async () => {
  const { h } = await handler();
  const m = await h.serve(makeRequest(".", Type.NS, { remoteAddress: "::ffff:192.0.2.9" }));
  assert.deepEqual(m.additional[0].data, { type: Type.A, address: "192.0.2.9" });
  assert.equal(m.additional[0].name, ".");
  assert.equal(m.additional[1].name, "_udp.");
});

test("class IN only: ANY is answered in IN, CH and others pass on", async () => {
  const { h, next } = await handler();
  const m = await h.serve(makeRequest("x.test", Type.TXT, { qclass: Class.ANY }));
  assert.ok(m.additional.length === 2 && m.additional.every((rr) => rr.class === Class.IN));
  for (const qclass of [Class.CH, 4]) {
    const r = await h.serve(makeRequest("x.test", Type.A, { qclass }));
    assert.equal(r.rcode, Rcode.REFUSED, "the recording next's answer");
  }
  assert.equal(next.calls.length, 2);
});

test("setup rejects arguments and blocks with file:line", async () => {
  await assert.rejects(
    async () => setup(dir("whoami", ["extra"], undefined, 7), ctx),
    configErrorLike(/^Corefile:7 - .*whoami: 'whoami' takes 0 argument/),
  );
  await assert.rejects(
    async () => setup(dir("whoami", [], [dir("x")], 9), ctx),
    configErrorLike(/^Corefile:9 - .*takes no block/),
  );
});

test("a name too long for the _udp. label: the address alone, never a failure", async () => {
  const { h } = await handler();
  // Wire lengths 250 (+5 = 255: fits) and 251, 255 (no room for the SRV owner).
  const name = (octets: number) => {
    const labels = ["a".repeat(63), "b".repeat(63), "c".repeat(63)];
    labels.push("d".repeat(octets - 1 - 3 * 64 - 1));
    return labels.join(".") + ".";
  };
  const fits = await h.serve(makeRequest(name(250), Type.A));
  assert.deepEqual(
    fits.additional.map((rr) => rr.type),
    [Type.A, Type.SRV],
  );
  for (const octets of [251, 255]) {
    const m = await h.serve(makeRequest(name(octets), Type.A));
    assert.equal(m.rcode, Rcode.NOERROR);
    assert.deepEqual(
      m.additional.map((rr) => rr.type),
      [Type.A],
      `${octets} octets`,
    );
  }
});
