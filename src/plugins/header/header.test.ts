import { test } from "node:test";
import assert from "node:assert/strict";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { startFakeUpstream } from "../../../test/upstream/fake-upstream.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { replyTo } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";

async function handler(...lines: Directive[]) {
  const f = fakeContext();
  const plugin = await setup(dir("header", [], lines), f.ctx);
  assert.ok(plugin);
  const next = recordingNext(Rcode.NOERROR);
  return { h: plugin(next), next, logs: f.logs };
}

const words = (...w: string[]) => dir(w[0], w.slice(1));

test("response lines set and clear flags of the reply; a line without selector is a response line", async () => {
  const { h } = await handler(words("response", "set", "ra", "ad"), words("clear", "aa"));
  const reply = await h.serve(makeRequest("www.example.org", Type.A));
  assert.deepEqual([reply.ra, reply.ad, reply.aa], [true, true, false]);
});

test("query lines change the query the next plugins see, not the client's", async () => {
  const { h, next } = await handler(words("query", "clear", "rd"), words("query", "set", "cd"));
  const req = makeRequest("www.example.org", Type.A);
  await h.serve(req);
  assert.deepEqual([next.calls[0].msg.rd, next.calls[0].msg.cd], [false, true]);
  assert.deepEqual([req.msg.rd, req.msg.cd], [true, false], "the client's query is untouched");
  assert.equal(next.calls[0].cache, req.cache, "one cache policy for the query and its copy");
});

test("rd and cd in replies: accepted with a warning that they echo the query", async () => {
  const { logs } = await handler(words("response", "set", "rd", "ra"));
  const warning = logs.find((l) => l.level === 40);
  assert.match(warning?.msg ?? "", /always echo the query's/);
  assert.deepEqual(warning?.flags, ["rd"]);
});

test("setup rejects what CoreDNS's header does not take, at file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("header"), /^Corefile:3 - .*header: needs a block/],
    [dir("header", ["set"], [words("set", "aa")]), /takes 0 argument/],
    [dir("header", [], [words("query", "toggle", "aa")]), /unknown action 'toggle'/],
    [dir("header", [], [words("query")]), /unknown action ''/],
    [dir("header", [], [words("set")]), /'set' needs at least one flag/],
    [dir("header", [], [words("response", "set", "qr")]), /unknown flag 'qr'/],
  ]);
});

test("end to end: reply flags from the chain and from the answer cache; the upstream sees the query's", async () => {
  const up = await startFakeUpstream((q) => [replyTo(q)]);
  const srv = await startServer(
    `h.test {\n    header {\n        response set ra\n        response clear aa\n    }\n    file db.h.test\n}\n` +
      `up.test {\n    header {\n        query clear rd\n    }\n    forward . 127.0.0.1:${up.port}\n}\n`,
    { files: { "db.h.test": zoneText("h.test", "www 60 IN A 192.0.2.1") } },
  );
  try {
    for (let i = 0; i < 2; i++) {
      const r = await dig(srv.port, "www.h.test", "A");
      assert.deepEqual(r.flags.sort(), ["qr", "ra", "rd"], `query ${i}`);
    }
    const r = await dig(srv.port, "www.up.test", "A");
    assert.ok(r.flags.includes("rd"), "the client's RD comes back");
    assert.equal(up.queries.length, 1);
    assert.equal(up.queries[0].msg.rd, false, "the upstream got RD clear");
  } finally {
    assert.equal(await srv.stop(), 0);
    await up.close();
  }
});
