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

const SECRET = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";
const opt = (name: string, ...args: string[]) => directive(name, args, undefined, 4);
const tsig = (args: string[], block?: ReturnType<typeof directive>[]) => directive("tsig", args, block);
const ctx = () => fakeContext({ zones: ["example.org."] }).ctx;

test("tsig: bad stanzas are start-up errors with file and line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-tsig-"));
  writeFileSync(join(dir, "empty.conf"), "# nothing\n");
  writeFileSync(join(dir, "nosecret.conf"), 'key "k." { algorithm hmac-sha256; };\n');
  await assertConfigErrors(
    setup,
    [
      [tsig([], [opt("secret", "k.")]), /^Corefile:4 - Error during parsing: tsig: 'secret' takes 2/],
      [
        tsig([], [opt("secret", "k.", "not base64!")]),
        /^Corefile:4 - .*secret k\.: 'not base64!' is not base64/,
      ],
      [tsig([], [opt("secret", "k.", SECRET), opt("secret", "K", SECRET)]), /key 'k\.' is defined twice/],
      [tsig([], [opt("secrets", join(dir, "missing.conf"))]), /^Corefile:4 - .*ENOENT/],
      [tsig([], [opt("secrets", join(dir, "empty.conf"))]), /no key "NAME"/],
      [tsig([], [opt("secrets", join(dir, "nosecret.conf"))]), /key "k\." has no secret/],
      [tsig([], [opt("require")]), /'require' takes at least 1/],
      [tsig([], [opt("require", "all", "A")]), /'require all' takes no query types/],
      [tsig([], [opt("require", "A", "BOGUS")]), /^Corefile:4 - .*unknown query type 'BOGUS'/],
      [tsig([], [opt("fudge", "300")]), /unknown property 'fudge'/],
      [tsig(["example.com"]), /not inside the server block's zones/],
    ],
    ctx,
  );
});

test("tsig: secrets from the stanza and a named.conf file; require refuses unsigned queries of its types", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-tsig-"));
  writeFileSync(
    join(dir, "keys.conf"),
    `key "from-file." {\n  algorithm hmac-sha256;\n  secret "${SECRET}";\n};\n`,
  );
  const f = fakeContext({ zones: ["example.org."] });
  const plugin = await setup(
    tsig(
      [],
      [opt("secret", "Inline", SECRET), opt("secrets", join(dir, "keys.conf")), opt("require", "AXFR", "a")],
    ),
    f.ctx,
  );
  assert.deepEqual([...f.ctx.block.tsig!.secrets.keys()], ["inline.", "from-file."]);
  const next = recordingNext();
  const h = plugin!(next);
  assert.equal((await h.serve(makeRequest("www.example.org", Type.A))).rcode, Rcode.REFUSED);
  await h.serve(makeRequest("www.example.org", Type.AAAA));
  await h.serve({ ...makeRequest("www.example.org", Type.A), tsig: "inline." });
  assert.equal(next.calls.length, 2, "other types and signed queries pass");
});
