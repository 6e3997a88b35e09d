import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";

test("root sets the block's folder: absolute, or relative to the one before; a missing one is said", async () => {
  const base = mkdtempSync(join(tmpdir(), "clusterdns-root-"));
  try {
    mkdirSync(join(base, "zones"));
    const f = fakeContext({ root: base });
    assert.equal(await setup(dir("root", ["zones"]), f.ctx), undefined);
    assert.equal(f.ctx.root, join(base, "zones"));
    const abs = fakeContext({ root: "/elsewhere" });
    await setup(dir("root", [join(base, "zones")]), abs.ctx);
    assert.equal(abs.ctx.root, join(base, "zones"));
    const missing = fakeContext({ root: base });
    await setup(dir("root", ["later"]), missing.ctx);
    assert.equal(missing.ctx.root, join(base, "later"));
    assert.match(
      missing.logs.map((l) => `${l.msg} ${String(l.at)}`).join("\n"),
      /does not exist \(yet\) Corefile:3/,
    );
    writeFileSync(join(base, "a-file"), "");
    await assertConfigErrors(
      setup,
      [
        [dir("root", ["a-file"]), /^Corefile:3 - .*root.*a-file' is not a folder/],
        [dir("root"), /takes 1 argument/],
        [dir("root", ["a", "b"]), /takes 1 argument/],
        [dir("root", ["zones"], [dir("x")]), /takes no block/],
      ],
      () => fakeContext({ root: base }).ctx,
    );
    const twice = fakeContext({ root: base });
    await setup(dir("root", ["zones"]), twice.ctx);
    await assert.rejects(
      async () => setup(dir("root", ["zones"], undefined, 4), twice.ctx),
      /Corefile:4 .*twice/,
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("end to end: a block with root reads its zone file from there, another from the Corefile's folder", async () => {
  // The Corefile's folder is not the server's working folder (startServer runs it in one of its own).
  const base = mkdtempSync(join(tmpdir(), "clusterdns-root-"));
  const zone = (origin: string, address: string) => zoneText(origin, `www 60 IN A ${address}`);
  mkdirSync(join(base, "zones"));
  writeFileSync(join(base, "zones", "db.a.test"), zone("a.test", "192.0.2.1"));
  writeFileSync(join(base, "db.b.test"), zone("b.test", "192.0.2.2"));
  writeFileSync(
    join(base, "Corefile"),
    "a.test {\n    file db.a.test\n    root zones\n}\nb.test {\n    file db.b.test\n}\n",
  );
  const srv = await startServer(undefined, { args: ["-conf", join(base, "Corefile")] });
  try {
    assert.deepEqual((await dig(srv.port, "www.a.test")).answer, ["www.a.test. 60 IN A 192.0.2.1"]);
    assert.deepEqual((await dig(srv.port, "www.b.test")).answer, ["www.b.test. 60 IN A 192.0.2.2"]);
  } finally {
    assert.equal(await srv.stop(), 0);
    rmSync(base, { recursive: true, force: true });
  }
});
