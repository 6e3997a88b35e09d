import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { once } from "node:events";
import { setup } from "./setup.ts";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { Rcode, Type } from "../../dns/constants.ts";

/** A next handler that records the requests it gets and answers only when told to (never, here). */
function stalled(): Handler & { seen: Request[] } {
  const seen: Request[] = [];
  return { name: "stalled", seen, serve: (req) => (seen.push(req), new Promise(() => {})) };
}

test("setup: TIMEOUT is a positive duration; anything else stops start-up at its line", async () => {
  await assertConfigErrors(setup, [
    [dir("cancel", ["0"]), /^Corefile:3 - .*cancel: the timeout must be above zero/],
    [dir("cancel", ["-1s"]), /invalid duration '-1s'/],
    [dir("cancel", ["5"]), /invalid duration '5'/],
    [dir("cancel", ["1s", "2s"]), /takes 0 to 1 argument/],
    [dir("cancel", [], [dir("x")]), /takes no block/],
  ]);
});

test("the default deadline is 5001 ms after the query arrived, set on the request the chain sees", async () => {
  const next = stalled();
  const h = (await setup(dir("cancel"), fakeContext().ctx))!(next);
  const req = makeRequest("a.example.org", Type.A);
  const before = Date.now();
  void h.serve(req);
  assert.equal(next.seen[0], req);
  assert.ok(req.deadline! >= before + 5001 && req.deadline! <= Date.now() + 5001, String(req.deadline));
});

test("past the deadline the client gets SERVFAIL while the plugin it waits on is still at work", async () => {
  const next = stalled();
  const h = (await setup(dir("cancel", ["50ms"]), fakeContext().ctx))!(next);
  const req = makeRequest("a.example.org", Type.A);
  const reply = await h.serve(req);
  assert.equal(reply.rcode, Rcode.SERVFAIL);
  assert.equal(req.answeredBy, "cancel");
});

test("a nearer deadline already set is kept", async () => {
  const h = (await setup(dir("cancel", ["1h"]), fakeContext().ctx))!(stalled());
  const req = makeRequest("a.example.org", Type.A);
  req.deadline = Date.now() + 30;
  assert.equal((await h.serve(req)).rcode, Rcode.SERVFAIL, "answered at the nearer deadline, not in an hour");
});

test("end to end: forward stops waiting on a silent upstream at the deadline, and dig gets SERVFAIL", async () => {
  // An upstream that takes every query and never answers.
  const upstream = dgram.createSocket("udp4");
  upstream.bind(0, "127.0.0.1");
  await once(upstream, "listening");
  let asked = 0;
  // Health checks (forward's ". NS" after a failed exchange) are not the clients' queries.
  upstream.on(
    "message",
    (pkt) => (asked += pkt.toString("latin1").toLowerCase().includes("example") ? 1 : 0),
  );
  // max_concurrent 1: while forward still waits on a query, the next one is REFUSED at once.
  const corefile = `. {\n    cancel 300ms\n    forward . 127.0.0.1:${upstream.address().port} {\n        max_concurrent 1\n    }\n}\n`;
  const srv = await startServer(corefile);
  try {
    for (let i = 0; i < 2; i++) {
      const start = performance.now();
      const r = await dig(srv.port, `q${i}.example.com`, "A");
      const took = performance.now() - start;
      assert.equal(r.status, "SERVFAIL", `query ${i}: SERVFAIL, not REFUSED: forward let go of the first`);
      // forward's own read timeout is 2 s: the deadline, not it, ended the wait.
      assert.ok(took < 1900, `query ${i} answered after ${took.toFixed(0)} ms`);
    }
    assert.equal(asked, 2, "both queries went upstream");
  } finally {
    await srv.stop();
    upstream.close();
  }
});
