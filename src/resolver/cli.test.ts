import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { serveTable, type TableServer } from "../../test/helpers/recording-dns-server.ts";
import { parseServer, resolveMain } from "./cli.ts";

const BIN = resolvePath(import.meta.dirname, "..", "..", "bin", "clusterdns");

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command in this process. */
async function run(args: string[]): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  const code = await resolveMain(
    args,
    { write: (s: string) => (stdout += s) },
    { write: (s: string) => (stderr += s) },
  );
  return { code, stdout, stderr };
}

/** The command as a user runs it: `clusterdns resolve ...`. */
function runBin(args: string[]): Promise<Ran> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [BIN, "resolve", ...args],
      { timeout: 20_000 },
      (_e, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }),
    );
  });
}

async function withServer(fn: (s: TableServer) => Promise<void>): Promise<void> {
  const s = await serveTable(
    {
      "web.default.svc.cluster.local.": { A: ["10.0.0.1"], AAAA: ["fd00::1"] },
      "db.prod.svc.example.org.": { A: ["10.0.9.9"] },
    },
    "127.0.0.1",
    0,
    () => undefined,
  );
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

test("clusterdns resolve --namespace: one line per query, the result, exit 0", async () => {
  await withServer(async (s) => {
    const r = await runBin(["web", "--namespace", "default", "--server", `127.0.0.1:${s.port}`]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.ok(lines.includes("  search default.svc.cluster.local svc.cluster.local cluster.local"));
    const queries = lines.filter((l) => /^\s+\d+\s/.test(l));
    assert.equal(queries.length, 2);
    assert.match(
      queries[0],
      /^\s+1\s+A\s+web\.default\.svc\.cluster\.local\.\s+@127\.0\.0\.1:\d+\s+NOERROR\s+A 10\.0\.0\.1$/,
    );
    assert.match(queries[1], /AAAA\s+web\.default\.svc\.cluster\.local\..*AAAA fd00::1$/);
    assert.equal(lines.at(-2), "result: web.default.svc.cluster.local: 10.0.0.1, fd00::1");
  });
});

test("resolve: not found exits 1 after the whole walk; --zone changes the search list", async () => {
  await withServer(async (s) => {
    const r = await run([
      "db",
      "--namespace=prod",
      "--zone",
      "example.org",
      "--server",
      `127.0.0.1:${s.port}`,
    ]);
    assert.equal(r.code, 0, r.stdout);
    const miss = await run([
      "nothere",
      "--namespace",
      "default",
      "--server",
      `127.0.0.1:${s.port}`,
      "--type",
      "A",
    ]);
    assert.equal(miss.code, 1);
    assert.equal(miss.stdout.split("\n").filter((l) => /NXDOMAIN/.test(l)).length, 4);
    assert.match(miss.stdout, /result: not resolved: HOST_NOT_FOUND/);
  });
});

test("resolve --json prints the trace; --resolv-conf reads a file and reports what glibc ignores", async () => {
  await withServer(async (s) => {
    const dir = mkdtempSync(join(tmpdir(), "resolve-cli-"));
    try {
      const file = join(dir, "resolv.conf");
      writeFileSync(file, "search default.svc.cluster.local\noptions ndots:5 frobnicate\n");
      const r = await run([
        "web",
        "--resolv-conf",
        file,
        "--server",
        `127.0.0.1:${s.port}`,
        "--json",
        "--mode",
        "hosts",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const t = JSON.parse(r.stdout);
      assert.deepEqual(t.resolvConf.search, ["default.svc.cluster.local"]);
      assert.deepEqual(t.resolvConf.notes, [
        { where: `${file}:2`, message: "ignored: unknown option 'frobnicate'" },
      ]);
      assert.equal(t.mode, "hosts");
      assert.deepEqual(
        t.queries.map((q: { type: string; name: string }) => `${q.type} ${q.name}`),
        ["AAAA web.default.svc.cluster.local."],
      );
      assert.deepEqual(t.result.addresses, ["fd00::1"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test("resolve: usage errors exit 2 with a message", async () => {
  const cases: [string[], RegExp][] = [
    [[], /a NAME to resolve is required/],
    [["a", "b"], /one NAME only/],
    [["a", "--type", "BOGUS"], /unknown record type 'BOGUS'/],
    [["a", "--server", "nope"], /not ADDRESS or ADDRESS:PORT/],
    [["a", "--namespace", "Bad_NS"], /not a namespace name/],
    [["a", "--namespace", "x", "--resolv-conf", "/etc/resolv.conf"], /exclude each other/],
    [["a", "--zone", "z"], /--zone needs --namespace/],
    [["a", "--frob"], /unknown flag '--frob'/],
    [["a", "--mode", "x"], /not ahosts or hosts/],
    [["a", "--resolv-conf", "/nonexistent/resolv.conf"], /cannot read/],
  ];
  for (const [args, message] of cases) {
    const r = await run(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, message);
    assert.match(r.stderr, /Usage: clusterdns resolve NAME/);
  }
  const usage = await runBin(["a", "--frob"]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /clusterdns resolve: unknown flag/);
  const help = await run(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--namespace NS/);
});

test("parseServer", () => {
  assert.deepEqual(parseServer("10.96.0.10"), { address: "10.96.0.10", port: 53 });
  assert.deepEqual(parseServer("127.0.0.1:1053"), { address: "127.0.0.1", port: 1053 });
  assert.deepEqual(parseServer("[::1]:5353"), { address: "::1", port: 5353 });
  assert.deepEqual(parseServer("::1"), { address: "::1", port: 53 });
  assert.throws(() => parseServer("127.0.0.1:99999"), /bad port/);
});

test("an IPv6 --server is shown with its port apart: [::1]:PORT", async () => {
  const r = await run([
    "web",
    "--namespace",
    "default",
    "--server",
    "[::1]:9",
    "--type",
    "A",
    "--no-explain",
  ]);
  assert.match(r.stdout, /^ {2}nameserver \[::1\]:9 \(--server\)$/m);
});
