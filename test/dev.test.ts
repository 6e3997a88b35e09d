// ./dev on a machine where npm cannot reach the registry: npm's own error and what to try, not silence.
// npm and an old node are stand-ins (shell scripts first on PATH), so nothing goes to the network.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ROOT } from "./helpers/server.ts";

const NPM_ERROR = "npm error code ECONNREFUSED";

/** A copy of ./dev and package.json in a fresh folder, and a bin/ of stand-ins to put first on PATH. */
function sandbox(t: { after(fn: () => void): void }, tools: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-dev-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ["dev", "package.json"]) copyFileSync(join(ROOT, f), join(dir, f));
  const bin = join(dir, "fake-bin");
  mkdirSync(bin);
  for (const [name, script] of Object.entries(tools)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return { dir, bin };
}

const failingNpm = `case "$1" in --version) echo 10.9.0;; *) echo "${NPM_ERROR}" >&2; echo "npm error errno ECONNREFUSED" >&2; exit 1;; esac`;

function runDev(dir: string, path: string, args: string[]) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      "bash",
      [join(dir, "dev"), ...args],
      { env: { ...process.env, PATH: path, CLUSTERDNS_NODE_PREFIX: join(dir, "node") }, timeout: 60_000 },
      (err, _stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
    );
  });
}

test("./dev: a Node install that fails shows npm's error and what to try", async (t) => {
  // A node too old for package.json's engines (its version check exits 1), and npm that fails.
  const { dir, bin } = sandbox(t, { node: "exit 1", npm: failingNpm });
  const r = await runDev(dir, `${bin}:/usr/bin:/bin`, ["start"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /installing Node 24/);
  assert.ok(r.stderr.includes(NPM_ERROR), r.stderr);
  assert.match(r.stderr, /npm could not install Node 24/);
  assert.match(r.stderr, /HTTPS_PROXY/);
});

test("./dev: npm ci that fails is followed by what to try", async (t) => {
  const { dir, bin } = sandbox(t, { npm: failingNpm });
  const r = await runDev(dir, `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`, ["start"]);
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(NPM_ERROR), r.stderr);
  assert.match(r.stderr, /npm ci failed/);
  assert.match(r.stderr, /NODE_EXTRA_CA_CERTS/);
});
