import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const opt = (name: string, ...args: string[]) => directive(name, args, undefined, 4);
const secondary = (args: string[], block?: ReturnType<typeof directive>[]) =>
  directive("secondary", args, block);
const ctx = () => fakeContext({ zones: ["example.org."] }).ctx;

test("secondary: bad stanzas are start-up errors with file and line", async () => {
  await assertConfigErrors(
    setup,
    [
      [
        secondary([]),
        /^Corefile:3 - Error during parsing: secondary: 'transfer from ADDRESS\.\.\.' is required/,
      ],
      [secondary([], [opt("transfer", "from")]), /^Corefile:4 - .*secondary: 'transfer' takes at least 2/],
      [
        secondary([], [opt("transfer", "to", "10.0.0.1")]),
        /^Corefile:4 - .*'transfer to': only 'transfer from ADDRESS\.\.\.'/,
      ],
      [
        secondary([], [opt("transfer", "from", "ns.example.net")]),
        /^Corefile:4 - .*'ns\.example\.net' is not an IP address/,
      ],
      [secondary([], [opt("transfer", "from", "10.0.0.1:99999")]), /port '99999'/],
      [secondary([], [opt("transfer", "from", "tls://10.0.0.1")]), /over TLS are not supported/],
      [secondary([], [opt("primary", "10.0.0.1")]), /^Corefile:4 - .*unknown property 'primary'/],
      [
        secondary(["example.com"], [opt("transfer", "from", "10.0.0.1")]),
        /not inside the server block's zones/,
      ],
    ],
    ctx,
  );
});

test("secondary: takes NOTIFY for its block, warns about upstream, serves SERVFAIL before the first transfer", async () => {
  const f = fakeContext({ zones: ["example.org."] });
  const plugin = await setup(
    secondary([], [opt("transfer", "from", "127.0.0.1:1", "[::1]:1"), opt("upstream", "10.0.0.53")]),
    f.ctx,
  );
  assert.ok(plugin);
  assert.equal(f.ctx.block.notify, true);
  assert.ok(f.logs.some((l) => l.level === 40 && l.msg.includes("'upstream' is ignored")));
  const next = recordingNext();
  const h = plugin(next);
  assert.equal((await h.serve(makeRequest("www.example.org", Type.A))).rcode, Rcode.SERVFAIL);
  await h.serve(makeRequest("example.net", Type.A));
  assert.equal(next.calls.length, 1, "names outside its zones pass on");
});
