import { test } from "node:test";
import assert from "node:assert/strict";
import { multisocketWorkers, setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { startFailure } from "../../../test/helpers/server.ts";

test("multisocket: no number or 1 to 1024, as CoreDNS; anything else fails at its line", async () => {
  for (const args of [[], ["1"], ["2"], ["1024"]]) {
    assert.equal(await setup(dir("multisocket", args), fakeContext().ctx), undefined);
  }
  await assertConfigErrors(setup, [
    [
      dir("multisocket", ["0"]),
      /^Corefile:3 - Error during parsing: multisocket: '0' is not a number of sockets from 1 to 1024/,
    ],
    [dir("multisocket", ["1025"]), /'1025' is not a number of sockets/],
    [dir("multisocket", ["-1"]), /'-1' is not a number of sockets/],
    [dir("multisocket", ["text"]), /'text' is not a number of sockets/],
    [dir("multisocket", ["2", "2"]), /^Corefile:3 - Error during parsing: multisocket/],
  ]);
});

test("the process runs the largest count its Corefile asks for; a line without one asks for the CPU quota", () => {
  const count = (text: string) => multisocketWorkers(parseCorefile(text, "Corefile"));
  assert.equal(count(". {\n    whoami\n}\n"), undefined);
  assert.equal(count("a:53 {\n    multisocket 3\n}\nb:1053 {\n    multisocket 5\n}\n"), 5);
  assert.equal(count("a {\n    multisocket 2\n}\nb {\n    multisocket\n}\n"), "auto");
});

test("a second multisocket in one block is refused at its line", async () => {
  const r = await startFailure(". {\n    multisocket 2\n    multisocket 3\n    whoami\n}\n");
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Corefile:3/);
});
