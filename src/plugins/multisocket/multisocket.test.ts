import { test } from "node:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";
import { multisocketWorkers, setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { startFailure, startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";

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

test("multisocket 2 starts two answering threads; -workers on the command line wins over it", async () => {
  const corefile = ". {\n    multisocket 2\n    whoami\n}\n";
  const started = (logs: Record<string, unknown>[]) => logs.find((l) => l.msg === "started")?.workers;
  const two = await startServer(corefile);
  try {
    assert.equal(started(two.logs), 2);
    assert.equal((await dig(two.port, "example.org")).status, "NOERROR");
    // A reload does not change the count, and says so.
    writeFileSync(join(two.dir, "Corefile"), corefile.replace("multisocket 2", "multisocket 3"));
    two.proc.kill("SIGUSR1");
    const said = "reload: the thread count changes at the next start, not now";
    for (let i = 0; i < 100 && !two.logs.some((l) => l.msg === said); i++) await sleep(50);
    assert.ok(two.logs.some((l) => l.msg === said && l.running === 2 && l.multisocket === 3));
  } finally {
    assert.equal(await two.stop(), 0);
  }
  const one = await startServer(corefile, { args: ["-workers", "1"] });
  try {
    assert.equal(started(one.logs), 1);
    assert.ok(one.logs.some((l) => l.msg === "-workers is given: multisocket is not used"));
  } finally {
    assert.equal(await one.stop(), 0);
  }
});
