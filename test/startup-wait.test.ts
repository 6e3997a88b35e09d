// The wait for the Kubernetes API's first sync (startup_timeout) against an API that never answers:
// it lasts as long as asked, and a signal during it ends the process at once: no DNS socket is open,
// so there is nothing to drain, and a process stuck on an API that does not answer would otherwise
// wait out the platform's grace period (or be deaf to Ctrl-C).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ROOT } from "./helpers/server.ts";

/** clusterdns waiting on an API that refuses every connection (port 1), for `timeout`; resolves once
 * it says it waits, with its log lines so far and its exit. */
async function waiting(timeout: string, dir: string) {
  const corefile = `cluster.local {\n    kubernetes {\n        endpoint http://127.0.0.1:1\n        startup_timeout ${timeout}\n    }\n}\n`;
  writeFileSync(join(dir, "Corefile"), corefile);
  const proc = spawn(
    process.execPath,
    [join(ROOT, "bin", "clusterdns"), "-conf", join(dir, "Corefile"), "-dns.port", "0"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  const lines: string[] = [];
  await new Promise<void>((started, fail) => {
    createInterface({ input: proc.stdout }).on("line", (line) => {
      lines.push(line);
      if (line.includes("waiting for the first sync before listening")) started();
    });
    void exited.then((code) => fail(new Error(`exited with ${code} before waiting`)));
  });
  return { proc, exited, lines };
}

test("a startup_timeout beyond a 32-bit timer (1000h) still waits, not listens at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-wait-"));
  const { proc, lines } = await waiting("1000h", dir);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(!lines.some((l) => l.includes('"started"')), "it listened before the first sync");
  } finally {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a SIGTERM during the wait for the first sync exits at once, with status 0 and a line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-signals-"));
  const { proc, exited } = await waiting("1h", dir);
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  try {
    proc.kill("SIGTERM");
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), 5000))]);
    assert.equal(code, 0, "exits at the first signal");
    assert.match(stderr, /SIGTERM while waiting for the first sync: nothing served yet, exiting/);
  } finally {
    clearTimeout(killer);
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
