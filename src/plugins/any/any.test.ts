import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { HINFO_TTL } from "./any.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

async function handler() {
  const plugin = await setup(dir("any"), fakeContext().ctx);
  assert.ok(plugin);
  const next = recordingNext();
  return { h: plugin(next), next };
}

test("an ANY query gets one HINFO RFC8482 at its name, without reaching the next plugin", async () => {
  const { h, next } = await handler();
  const req = makeRequest("www.example.org", Type.ANY);
  const m = await h.serve(req);
  assert.equal(m.rcode, Rcode.NOERROR);
  assert.equal(m.answer.length, 1);
  const rr = m.answer[0];
  assert.deepEqual(
    [rr.name, rr.type, rr.class, rr.ttl],
    ["www.example.org.", Type.HINFO, Class.IN, HINFO_TTL],
  );
  assert.deepEqual([m.authority, m.additional], [[], []]);
  assert.equal(next.calls.length, 0);
  assert.equal(req.answeredBy, "any");
  assert.equal(req.cache.private, false, "the same answer for every client");
});

test("other types pass on; a class ANY question gets class IN", async () => {
  const { h, next } = await handler();
  assert.equal((await h.serve(makeRequest("www.example.org", Type.A))).rcode, Rcode.REFUSED);
  assert.equal(next.calls.length, 1);
  const m = await h.serve(makeRequest("www.example.org", Type.ANY, { qclass: Class.ANY }));
  assert.equal(m.answer[0].class, Class.IN);
});

test("setup takes no arguments and no block", async () => {
  await assertConfigErrors(setup, [
    [dir("any", ["all"]), /^Corefile:3 - .*any: 'any' takes 0 argument/],
    [dir("any", [], [dir("x")]), /'any' takes no block/],
  ]);
});

test("end to end: dig ANY gets the HINFO, also from the answer cache; A still gets the zone's answer", async () => {
  const zone = zoneText("any.test", "www 60 IN A 192.0.2.1", 'www 60 IN TXT "hello"');
  const srv = await startServer("any.test {\n    any\n    file db.any.test\n}\n", {
    files: { "db.any.test": zone },
  });
  try {
    for (let i = 0; i < 2; i++) {
      const r = await dig(srv.port, "WWW.any.test", "ANY");
      assert.equal(r.status, "NOERROR");
      assert.deepEqual(r.answer, ['WWW.any.test. 8482 IN HINFO "RFC8482" ""']);
    }
    assert.deepEqual((await dig(srv.port, "www.any.test", "A")).answer, ["www.any.test. 60 IN A 192.0.2.1"]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
