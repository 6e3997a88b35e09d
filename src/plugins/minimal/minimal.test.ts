import { test } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { RR } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { replyTo } from "../../dns/message.ts";
import { parseRRText } from "../../dns/text.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const SOA = parseRRText("m.test. 60 IN SOA ns.m.test. hostmaster.m.test. 1 60 60 60 60");
const NS = parseRRText("m.test. 60 IN NS ns.m.test.");
const GLUE = parseRRText("ns.m.test. 60 IN A 192.0.2.53");

/** A next handler that answers with these sections. */
function answering(rcode: number, answer: RR[], authority: RR[], additional: RR[]): Handler {
  return {
    name: "answer",
    serve(req) {
      const m = replyTo(req.msg, rcode);
      Object.assign(m, { answer, authority, additional });
      return Promise.resolve(m);
    },
  };
}

async function through(next: Handler) {
  const plugin = await setup(dir("minimal"), fakeContext().ctx);
  assert.ok(plugin);
  return plugin(next).serve(makeRequest("www.m.test", Type.A, { edns: true }));
}

test("a positive answer keeps only its answer section", async () => {
  const a = parseRRText("www.m.test. 60 IN A 192.0.2.1");
  const m = await through(answering(Rcode.NOERROR, [a], [NS], [GLUE]));
  assert.deepEqual([m.answer, m.authority, m.additional], [[a], [], []]);
});

test("denials, referrals and errors are left whole", async () => {
  for (const [rcode, authority] of [
    [Rcode.NXDOMAIN, [SOA]],
    [Rcode.NOERROR, [SOA]],
    [Rcode.NOERROR, [NS]],
    [Rcode.SERVFAIL, [SOA]],
  ] as const) {
    const m = await through(answering(rcode, [], [...authority], [GLUE]));
    assert.deepEqual([m.authority, m.additional], [authority, [GLUE]]);
  }
});

test("setup takes no arguments and no block", async () => {
  await assertConfigErrors(setup, [
    [dir("minimal", ["yes"]), /^Corefile:3 - .*minimal: 'minimal' takes 0 argument/],
    [dir("minimal", [], [dir("x")]), /'minimal' takes no block/],
  ]);
});

test("end to end: an SRV answer comes without its additional addresses, NXDOMAIN with its SOA", async () => {
  const zone = zoneText("m.test", "_http._tcp 60 IN SRV 0 100 80 web", "web 60 IN A 192.0.2.1");
  const files = { "db.m.test": zone };
  const srv = await startServer("m.test {\n    minimal\n    file db.m.test\n}\n", { files });
  const full = await startServer("m.test {\n    file db.m.test\n}\n", { files });
  try {
    const srvAnswer = await dig(srv.port, "_http._tcp.m.test", "SRV");
    assert.deepEqual(srvAnswer.answer, ["_http._tcp.m.test. 60 IN SRV 0 100 80 web.m.test."]);
    assert.deepEqual([srvAnswer.authority, srvAnswer.additional], [[], []]);
    const without = await dig(full.port, "_http._tcp.m.test", "SRV");
    assert.deepEqual(without.additional, ["web.m.test. 60 IN A 192.0.2.1"], "the zone does give the address");
    const nx = await dig(srv.port, "nope.m.test", "A");
    assert.equal(nx.status, "NXDOMAIN");
    assert.equal(nx.authority.length, 1);
  } finally {
    assert.equal(await srv.stop(), 0);
    assert.equal(await full.stop(), 0);
  }
});
