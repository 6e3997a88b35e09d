import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";

const root = mkdtempSync(join(tmpdir(), "clusterdns-sign-setup-"));
test.after(() => rmSync(root, { recursive: true, force: true }));
const key = basename(
  execFileSync("dnssec-keygen", ["-q", "-K", root, "-a", "ED25519", "example.org"], {
    encoding: "utf8",
  }).trim(),
);
writeFileSync(join(root, "db.example.org"), zoneText("example.org", "www 60 IN A 192.0.2.1"));
writeFileSync(join(root, "db.broken"), "this is no zone\n");
const ctx = () => fakeContext({ zones: ["example.org."], root }).ctx;

test("sign's options: each bad one is one error with file:line", async () => {
  await assertConfigErrors(
    setup,
    [
      [dir("sign"), /sign/],
      [
        dir("sign", ["db.example.org"]),
        /no keys: give them with 'key file KEY\.\.\.' or 'key directory DIR\.\.\.'/,
      ],
      [dir("sign", ["db.example.org"], [dir("key", ["disk", key])]), /unknown key source 'disk'/],
      [dir("sign", ["db.example.org"], [dir("key", ["file", "Knothere"])]), /Knothere\.key: ENOENT/],
      [dir("sign", ["db.example.org"], [dir("key", ["directory", "nowhere"])]), /nowhere: ENOENT/],
      [dir("sign", ["db.example.org"], [dir("key", ["directory", "."]), dir("directory")]), /sign/],
      [
        dir(
          "sign",
          ["db.example.org"],
          [dir("key", ["file", key]), dir("directory", ["a"]), dir("directory", ["b"])],
        ),
        /directory/,
      ],
      [
        dir("sign", ["db.example.org"], [dir("key", ["file", key]), dir("nsec3")]),
        /unknown property 'nsec3'/,
      ],
      [
        dir("sign", ["db.example.org", "example.com"], [dir("key", ["file", key])]),
        /not inside the server block's zones/,
      ],
      [
        dir("sign", ["db.broken"], [dir("key", ["file", key]), dir("directory", ["out"])]),
        /example\.org\.: .*db\.broken/,
      ],
      [dir("sign", ["db.missing"], [dir("key", ["file", key]), dir("directory", ["out"])]), /ENOENT/],
    ],
    ctx,
  );
});

test("setup (and so -validate's dry run) writes nothing; start-up signs, with key directory's pairs", async () => {
  const f = fakeContext({ zones: ["example.org."], root });
  await setup(
    dir("sign", ["db.example.org"], [dir("key", ["directory", "."]), dir("directory", ["signed"])]),
    f.ctx,
  );
  assert.ok(!existsSync(join(root, "signed", "db.example.org.signed")));
  await f.start();
  assert.ok(existsSync(join(root, "signed", "db.example.org.signed")));
  await f.stop();
});
