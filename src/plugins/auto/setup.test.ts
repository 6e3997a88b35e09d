import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup } from "./setup.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const opt = (name: string, ...args: string[]) => directive(name, args, undefined, 4);
const auto = (args: string[], block?: ReturnType<typeof directive>[]) => directive("auto", args, block);
const ctx = () => fakeContext({ zones: ["example.org.", "example.net."] }).ctx;

test("auto: bad stanzas are start-up errors with file and line", async () => {
  await assertConfigErrors(
    setup,
    [
      [auto([]), /^Corefile:3 - Error during parsing: auto: 'directory DIR' is required/],
      [
        auto([], [opt("directory")]),
        /^Corefile:4 - .*'directory' takes DIR or DIR REGEXP ORIGIN_TEMPLATE, got 0/,
      ],
      [auto([], [opt("directory", ".", "db\\.(.*)")]), /got 2 argument/],
      [auto([], [opt("directory", ".", "db(", "{1}")]), /^Corefile:4 - .*'db\(' is not a regexp/],
      [auto([], [opt("directory", "."), opt("directory", ".")]), /'directory' is given twice/],
      [auto([], [opt("directory", "."), opt("reload", "soon")]), /invalid duration 'soon'/],
      [auto([], [opt("directory", "."), opt("no_reload")]), /unknown property 'no_reload'/],
      [auto(["example.com"], [opt("directory", ".")]), /not inside the server block's zones/],
    ],
    ctx,
  );
});

test("auto: REGEXP and ORIGIN_TEMPLATE make the origin; zones outside the stanza's are left out", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-auto-"));
  const zone = (origin: string) =>
    `$ORIGIN ${origin}.\n@ 60 SOA ns hostmaster 1 2 3 4 5\nwww 60 A 192.0.2.7\n`;
  writeFileSync(join(dir, "org-example.zone"), zone("example.org"));
  writeFileSync(join(dir, "com-example.zone"), zone("example.com"));
  const f = fakeContext({ zones: ["example.org.", "example.net."] });
  const plugin = await setup(auto([], [opt("directory", dir, "^(\\w+)-(\\w+)\\.zone$", "{2}.{1}")]), f.ctx);
  const next = recordingNext();
  const h = plugin!(next);
  const r = await h.serve(makeRequest("www.example.org", Type.A));
  assert.equal(r.rcode, Rcode.NOERROR);
  assert.equal(r.answer.length, 1);
  await h.serve(makeRequest("www.example.com", Type.A));
  assert.equal(next.calls.length, 1, "example.com is not the block's: its file is not served");
});
