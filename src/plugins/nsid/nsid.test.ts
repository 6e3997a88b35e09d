import { test } from "node:test";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { setup } from "./setup.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { EdnsOption, Rcode, Type } from "../../dns/constants.ts";

async function handler(args: string[]) {
  const plugin = await setup(dir("nsid", args), fakeContext().ctx);
  assert.ok(plugin);
  return plugin(recordingNext(Rcode.NXDOMAIN));
}

/** A request whose EDNS record carries these option codes (empty data). */
function asking(...codes: number[]) {
  const req = makeRequest("www.example.org", Type.A, { edns: true });
  req.msg.edns!.options = codes.map((code) => ({ code, data: new Uint8Array() }));
  return req;
}

test("a query with an NSID option gets the identifier, whatever the next plugin answered", async () => {
  const h = await handler(["Use", "The", "Force"]);
  const m = await h.serve(asking(EdnsOption.NSID));
  assert.equal(m.rcode, Rcode.NXDOMAIN);
  const opt = m.edns?.options.find((o) => o.code === EdnsOption.NSID);
  assert.equal(Buffer.from(opt!.data).toString(), "Use The Force");
});

test("without DATA the host name; a query that does not ask gets no option", async () => {
  const h = await handler([]);
  const m = await h.serve(asking(EdnsOption.NSID));
  assert.equal(Buffer.from(m.edns!.options[0].data).toString(), hostname());
  assert.equal((await h.serve(asking(EdnsOption.COOKIE))).edns, undefined);
  assert.equal((await h.serve(makeRequest("www.example.org", Type.A))).edns, undefined);
});

test("setup takes no block and a short identifier", async () => {
  await assertConfigErrors(setup, [
    [dir("nsid", [], [dir("x")]), /^Corefile:3 - .*'nsid' takes no block/],
    [dir("nsid", ["x".repeat(513)]), /the identifier is 513 octets; at most 512/],
  ]);
});

test("end to end: dig +nsid gets the identifier, also from the answer cache; other queries never do", async () => {
  const srv = await startServer(". {\n    nsid clusterdns-0\n    any\n}\n");
  try {
    const id = /; NSID: .*\("clusterdns-0"\)/;
    // Asked alternately, each twice: the second of each pair is a hit on what the first stored.
    for (const round of [0, 1]) {
      for (let i = 0; i < 2; i++) {
        const r = await dig(srv.port, "x.test", "ANY", "+nsid");
        assert.equal(r.status, "NOERROR");
        assert.match(r.text, id, `round ${round}, query ${i}`);
      }
      for (let i = 0; i < 2; i++) {
        const r = await dig(srv.port, "x.test", "ANY");
        assert.equal(r.status, "NOERROR");
        assert.doesNotMatch(r.text, /NSID/, `round ${round}, query ${i}`);
      }
    }
    assert.doesNotMatch((await dig(srv.port, "x.test", "ANY", "+nsid", "+noedns")).text, /NSID/);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
