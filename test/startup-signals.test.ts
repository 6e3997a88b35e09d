// Signals while the server waits for the Kubernetes API's first sync (startup_timeout): it is not up
// yet, so a first SIGTERM is kept for when it is, but a second one must end it at once, as it does
// once the server is up; a process stuck on an API that does not answer is otherwise deaf to Ctrl-C.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ROOT } from "./helpers/server.ts";

test("a second SIGTERM during the wait for the first sync exits at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-signals-"));
  // Port 1 refuses every connection: the first sync never comes, and startup_timeout is an hour.
  const corefile =
    "cluster.local {\n    kubernetes {\n        endpoint http://127.0.0.1:1\n        startup_timeout 1h\n    }\n}\n";
  writeFileSync(join(dir, "Corefile"), corefile);
  const proc = spawn(
    process.execPath,
    [join(ROOT, "bin", "clusterdns"), "-conf", join(dir, "Corefile"), "-dns.port", "0"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  const killer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  try {
    await new Promise<void>((waiting, fail) => {
      createInterface({ input: proc.stdout }).on("line", (line) => {
        if (line.includes("waiting for the first sync before listening")) waiting();
      });
      void exited.then((code) => fail(new Error(`exited with ${code} before waiting`)));
    });
    proc.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    proc.kill("SIGTERM");
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), 5000))]);
    assert.equal(code, 1, "exits at the second signal");
  } finally {
    clearTimeout(killer);
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
