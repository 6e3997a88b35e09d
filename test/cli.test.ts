// The clusterdns command: flags, Corefile discovery, start-up errors and signals.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cpSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { startServer, startFailure, ROOT } from "./helpers/server.ts";
import { dig, parseDig } from "./helpers/dig.ts";
import { createNetns } from "./helpers/netns.ts";
import { freePort } from "./helpers/free-port.ts";
import { UDP_ENGINES, engineArgs } from "./helpers/engines.ts";

const run = promisify(execFile);
const BIN = join(ROOT, "bin", "clusterdns");

test("-version and --version print the version", async () => {
  for (const flag of ["-version", "--version"]) {
    const { stdout } = await run(process.execPath, [BIN, flag]);
    assert.match(stdout, /^clusterdns-\d+\.\d+\.\d+\n/);
  }
});

test("a Node older than package.json's engines gets one line saying what to do", async () => {
  // The same check a real Node 20 meets (it has no type stripping, so it would otherwise die with
  // ERR_UNKNOWN_FILE_EXTENSION); the version is faked before bin/clusterdns runs.
  const old = `data:text/javascript,Object.defineProperty(process, "versions", { value: { ...process.versions, node: "22.18.0" } })`;
  await assert.rejects(
    run(process.execPath, ["--import", old, BIN, "-version"]),
    (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.equal(err.stderr, "clusterdns: needs Node >= 22.19, this is 22.18.0; ./dev start installs it\n");
      return true;
    },
  );
});

/** Runs clusterdns without the capability to bind ports below 1024 (root keeps its file access, so no
 * other user needs to read Node and the worktree), with `corefile` and `args`; resolves when it exits. */
async function startUnprivileged(corefile: string, args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-test-"));
  try {
    writeFileSync(join(dir, "Corefile"), corefile);
    const drop = ["--bounding-set=-net_bind_service", "--inh-caps=-net_bind_service"];
    const cmd = [...drop, process.execPath, BIN, "-conf", join(dir, "Corefile"), ...args];
    return await run("setpriv", cmd, { cwd: dir, timeout: 30_000 }).then(
      () => ({ code: 0, stderr: "", dir }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr, dir }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("port 53 without the capability: the hint names the Corefile key that set the port, else -dns.port", async () => {
  // A Corefile's own port (`.:53`, as every real one says): -dns.port would change nothing.
  const keyed = await startUnprivileged(
    "example.org {\n    whoami\n}\n.:53 {\n    bind 127.0.0.1\n    whoami\n}\n",
    ["-dns.port", "0"],
  );
  assert.equal(keyed.code, 1);
  assert.equal(
    keyed.stderr,
    `clusterdns: cannot listen on port 53 (udp and tcp on 127.0.0.1): permission denied (ports below 1024 need root or the NET_BIND_SERVICE capability; or change the port of '.:53' at ${keyed.dir}/Corefile:4)\n`,
  );
  // The port is the default: the flag is what to change.
  const flagged = await startUnprivileged(". {\n    bind 127.0.0.1\n    whoami\n}\n", []);
  assert.equal(flagged.code, 1);
  assert.match(flagged.stderr, /permission denied .*; try -dns\.port 1053\)\n$/);
  assert.doesNotMatch(flagged.stderr, /change the port/);
  // An HTTP endpoint on a low port: its directive, at its line.
  const http = await startUnprivileged(". {\n    whoami\n    health 127.0.0.1:80\n}\n", ["-dns.port", "0"]);
  assert.equal(http.code, 1);
  assert.match(
    http.stderr,
    /Corefile:3 - health: cannot listen on 127\.0\.0\.1:80: permission denied .*; or give health a port from 1024 up\)\n$/,
  );
});

test("a clone where npm ci has not run gets one line saying to run it, not a stack trace", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-clone-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const part of ["bin", "src", "package.json"])
    cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  await assert.rejects(
    run(process.execPath, [join(dir, "bin", "clusterdns"), "-version"], { cwd: dir }),
    (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(
        err.stderr,
        /^clusterdns: its dependencies are not installed \(no package '[^']+'\): run npm ci in \S+ \(or \.\/dev start there\)\n$/,
      );
      assert.ok(err.stderr.includes(dir), "names the folder to run it in");
      return true;
    },
  );
});

test("-plugins lists the built plugins in chain order", async () => {
  const { stdout } = await run(process.execPath, [BIN, "-plugins"]);
  const names = [...stdout.matchAll(/dns\.(\w+)/g)].map((m) => m[1]);
  for (const p of ["file", "hosts", "whoami", "chaos", "log", "errors", "health", "ready", "bind"]) {
    assert.ok(names.includes(p), `${p} listed`);
  }
  assert.ok(names.indexOf("errors") < names.indexOf("file"), "chain order, not alphabetical");
});

test("output into a reader that stops early (| head -1, | true): no EPIPE stack trace, exit 0", async () => {
  // A pipe is synchronous on Linux: a write after the reader has gone fails with EPIPE.
  const corefile = join(ROOT, "test", "fixtures", "corpus", "openshift.Corefile");
  for (const args of ["-plugins", `migrate coredns ${corefile}`, `-validate -conf ${corefile}`]) {
    for (const reader of ["head -1", "true"]) {
      const script = `"$0" "$1" ${args} | ${reader} >/dev/null; exit "\${PIPESTATUS[0]}"`;
      const { stderr } = await run("bash", ["-c", script, process.execPath, BIN]);
      assert.doesNotMatch(stderr, /EPIPE|Error/, `${args} | ${reader}`);
    }
  }
  const script = `"$0" "$1" -plugins | head -1`;
  assert.equal((await run("bash", ["-c", script, process.execPath, BIN])).stdout, "Server types:\n");
});

test("an unknown flag exits 2 with usage", async () => {
  await assert.rejects(run(process.execPath, [BIN, "-nope"]), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 2);
    assert.match(err.stderr, /unknown flag '-nope'/);
    return true;
  });
});

test("a port in use stops start-up with one line on stderr and no error log", async (t) => {
  const first = await startServer(". {\n    whoami\n}\n");
  t.after(() => first.stop());
  const dns = await startFailure(`.:${first.port} {\n    whoami\n}\n`);
  assert.equal(dns.code, 1);
  assert.doesNotMatch(dns.stdout, /"level":"(error|fatal)"|"stack"/, "no error log line with a stack trace");
  assert.match(
    dns.stderr,
    new RegExp(
      `^clusterdns: cannot listen on port ${first.port} .*: the address is in use: usually another process holds port ${first.port} \\(see which: ss `,
    ),
  );
  assert.equal(dns.stderr.split("\n").length, 2, `one line: ${dns.stderr}`);

  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  t.after(() => blocker.close());
  const taken = `127.0.0.1:${(blocker.address() as AddressInfo).port}`;
  const http = await startFailure(`. {\n    whoami\n    ready ${taken}\n}\n`);
  assert.equal(http.code, 1);
  assert.doesNotMatch(http.stdout, /"level":"(error|fatal)"|"stack"/);
  assert.match(
    http.stderr,
    new RegExp(
      `^clusterdns: \\S*Corefile:3 - ready: cannot listen on ${taken}: the address is in use: usually another process holds port`,
    ),
  );
  assert.doesNotMatch(http.stderr, /Error during parsing/, "the Corefile is right: the port is taken");
  assert.equal(http.stderr.split("\n").length, 2, `one line: ${http.stderr}`);
});

test("a bad Corefile stops start-up with file:line and the directive", async () => {
  const unknown = await startFailure(". {\n    whoami\n    frobnicate on\n}\n");
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Corefile:3 - Error during parsing: Unknown directive 'frobnicate'/);

  const badOption = await startFailure(
    "example.org {\n    file db.example.org {\n        relaod 10s\n    }\n}\n",
    {
      "db.example.org":
        "@ 3600 IN SOA ns hostmaster 1 7200 900 1209600 300\n@ 3600 IN NS ns\nns 3600 IN A 192.0.2.1\n",
    },
  );
  assert.equal(badOption.code, 1);
  assert.match(badOption.stderr, /Corefile:3 - Error during parsing: file: unknown property 'relaod'/);

  // A plugin of CoreDNS that clusterdns does not have: named as such, not as an unknown directive.
  const coredns = await startFailure(". {\n    whoami\n    route53 example.org.:Z1\n}\n");
  assert.equal(coredns.code, 1);
  assert.match(
    coredns.stderr,
    /Corefile:3 - Error during parsing: plugin route53 of CoreDNS is not supported by clusterdns: no cloud DNS backends: .* \(see docs\/compatibility\.md\)/,
  );

  // A feature clusterdns does not have (DNS over QUIC upstreams) is refused, not ignored.
  const unsupported = await startFailure(". {\n    forward . quic://192.0.2.53\n}\n");
  assert.equal(unsupported.code, 1);
  assert.match(unsupported.stderr, /Corefile:2 .*forward.*DNS-over-QUIC .*not supported/);
});

test("start-up: a second forward ., a refused second plugin and a template placeholder stop it at their line", async () => {
  const forward = await startFailure(". {\n    forward . 192.0.2.1\n    forward . 192.0.2.2\n}\n");
  assert.equal(forward.code, 1);
  assert.match(
    forward.stderr,
    /^clusterdns: \S*Corefile:3 - Error during parsing: forward: never reached: 'forward \.' at \S*Corefile:2 already takes every name in \.[^\n]*\n$/,
  );
  const hosts = await startFailure(
    ". {\n    hosts {\n        fallthrough\n    }\n    whoami\n    hosts\n}\n",
  );
  assert.equal(hosts.code, 1);
  assert.match(
    hosts.stderr,
    /Corefile:6 - Error during parsing: hosts: this plugin can only be used once per server block/,
  );
  const k3s = await startFailure(".:53 {\n    kubernetes %{CLUSTER_DOMAIN}% in-addr.arpa ip6.arpa\n}\n");
  assert.equal(k3s.code, 1);
  assert.match(
    k3s.stderr,
    /^clusterdns: \S*Corefile:2 - Error during parsing: '%\{CLUSTER_DOMAIN\}%' is a template placeholder \(k3s\)/,
  );
  const proxy = await startFailure(". {\n    proxy . /etc/resolv.conf\n}\n");
  assert.match(
    proxy.stderr,
    /Corefile:2 - Error during parsing: plugin proxy was removed from CoreDNS in 1\.5\.0: use forward/,
  );
});

test("start-up on a Corefile with no server block stops it, naming the file, instead of serving nothing", async () => {
  for (const text of ["", "# nothing here yet\n"]) {
    const r = await startFailure(text);
    assert.equal(r.code, 1, JSON.stringify(text));
    assert.match(
      r.stderr,
      /^clusterdns: \S*Corefile: the Corefile has no server block: nothing would be served\n$/,
    );
    assert.doesNotMatch(r.stdout, /"msg":"started"/);
  }
});

test("start-up: health on its block's DNS port stops it at the health line, not blaming another process", async () => {
  const port = await freePort();
  const r = await startFailure(`.:${port} {\n    health 127.0.0.1:${port}\n    whoami\n}\n`);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `^clusterdns: (\\S*Corefile):2 - Error during parsing: health: 127\\.0\\.0\\.1:${port} is taken by the DNS server block '\\.:${port}' \\(\\1:1\\), which listens on TCP as well as UDP: give health another port\\n$`,
    ),
  );
});

test("start-up on a ConfigMap says it is one, and what reads it", async () => {
  const r = await startFailure(readFileSync(join(ROOT, "deploy", "base", "configmap.yaml"), "utf8"));
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^clusterdns: \S*Corefile is a Kubernetes ConfigMap, not a Corefile: .*-validate -conf \S*Corefile checks the ConfigMap as it is\n$/,
  );
});

test("start-up: an import glob that matches nothing is a warning in the log, as CoreDNS gives", async (t) => {
  const s = await startServer(". {\n    import custom/*.override\n    whoami\n}\n");
  t.after(() => s.stop());
  const warning = s.logs.find((l) => typeof l.msg === "string" && l.msg.startsWith("No files matching"));
  assert.ok(warning, JSON.stringify(s.logs));
  assert.equal(warning.msg, "No files matching import glob pattern: custom/*.override");
  assert.match(String(warning.at), /Corefile:2$/);
  assert.equal((await dig(s.port, "example.org", "A")).status, "NOERROR");
});

test("a kubeconfig that is missing is no Corefile mistake: file:line, the file, what to do", async () => {
  const r = await startFailure(
    "cluster.local {\n    kubernetes cluster.local {\n        kubeconfig nothere.yaml\n    }\n}\n",
  );
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^clusterdns: \S*Corefile:2 - kubernetes: kubeconfig: \S*nothere\.yaml does not exist\n$/,
  );
  assert.doesNotMatch(r.stderr, /Error during parsing/);
});

test("a DNS-over-TLS upstream starts: nothing is sent before a query asks", async () => {
  const s = await startServer(
    ". {\n    forward . tls://9.9.9.9 {\n        tls_servername dns.quad9.net\n    }\n}\n",
  );
  assert.equal(await s.stop(), 0);
});

test("-conf=FILE and --conf FILE are the same flag", async () => {
  const s = await startServer(undefined, {
    args: ["--conf", join(ROOT, "test", "fixtures", "whoami.Corefile")],
  });
  const r = await dig(s.port, "anything.test", "A");
  assert.equal(r.status, "NOERROR");
  assert.ok(r.additional.some((l) => / IN A 127\.0\.0\.1$/.test(l)));
  assert.equal(await s.stop(), 0);
  assert.equal(s.stderr(), "", "no line for people when stderr is no terminal and this is no demo");
});

test("without -conf, ./Corefile is used when present", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-cwd-"));
  writeFileSync(
    join(dir, "Corefile"),
    "hosts.test {\n    hosts {\n        192.0.2.7 here.hosts.test\n    }\n}\n",
  );
  try {
    const s = await startServer(undefined, { cwd: dir });
    const r = await dig(s.port, "here.hosts.test", "A");
    assert.deepEqual(r.answer, ["here.hosts.test. 3600 IN A 192.0.2.7"]);
    assert.equal(await s.stop("SIGINT"), 0, "SIGINT stops it cleanly too");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("with no Corefile at all, the built-in demo serves example.org and the demo cluster", async (t) => {
  // The demo's health and ready listen on the fixed ports 8080 and 8181, which anything on this machine
  // may hold (as this test does, to prove it does not matter): it runs in a network namespace of its own.
  const held = await Promise.all([8080, 8181].map(holdPort));
  t.after(() => held.forEach((h) => h?.close()));
  const ns = await createNetns(undefined, "nameserver 127.0.0.1\n");
  t.after(() => ns.destroy());
  const s = await startServer(undefined, { netns: ns.name });
  t.after(() => s.stop());
  const dig = async (port: number, name: string, type: string) =>
    parseDig(
      (await ns.exec("dig", ["@127.0.0.1", "-p", String(port), name, type, "+tries=1", "+time=3"])).stdout,
    );
  const r = await dig(s.port, "example.org", "SOA");
  assert.equal(r.status, "NOERROR");
  assert.ok(r.flags.includes("aa"));
  const svc = await dig(s.port, "nginx.default.svc.cluster.local", "A");
  assert.deepEqual(svc.answer, ["nginx.default.svc.cluster.local. 5 IN A 10.102.97.154"]);
  const ptr = await dig(s.port, "10.0.0.10.in-addr.arpa", "PTR");
  assert.deepEqual(ptr.answer, ["10.0.0.10.in-addr.arpa. 5 IN PTR kube-dns.kube-system.svc.cluster.local."]);
  // Besides the JSON logs on stdout, one line for the person trying it (stderr arrives on its own pipe).
  for (let i = 0; i < 250 && !s.stderr().includes("\n"); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(
    s.stderr(),
    `clusterdns: answering on 127.0.0.1:${s.port} (udp, tcp); try: dig @127.0.0.1 -p ${s.port} nginx.default.svc.cluster.local\n`,
  );
  const ready = await ns.exec("curl", [
    "-s",
    "-w",
    " %{http_code}",
    "http://127.0.0.1:8080/health",
    "http://127.0.0.1:8181/ready",
  ]);
  assert.equal(ready.stdout, "OK 200OK 200", "health and ready on the demo's own ports, in the namespace");
  assert.equal(await s.stop(), 0);
});

/** Listens on `port` on every address, so that nothing else may; undefined when something already
 * does (it is taken either way). */
async function holdPort(port: number) {
  const server = createServer();
  return new Promise<ReturnType<typeof createServer> | undefined>((resolve) => {
    server.once("error", () => resolve(undefined));
    server.listen(port, () => resolve(server));
  });
}

for (const engine of UDP_ENGINES) {
  test(`-reuseport: two processes share one port for UDP and TCP, and both answer (${engine})`, async () => {
    const port = await freePort();
    const corefile = `example.org:${port} {\n    whoami\n}\n`;
    const args = ["-reuseport", ...engineArgs(engine)];
    const a = await startServer(corefile, { args });
    try {
      const b = await startServer(corefile, { args });
      try {
        assert.deepEqual([a.port, b.port], [port, port]);
        assert.equal((await dig(port, "example.org", "A")).status, "NOERROR");
        assert.equal((await dig(port, "example.org", "A", "+tcp")).status, "NOERROR");
      } finally {
        assert.equal(await b.stop(), 0);
      }
    } finally {
      assert.equal(await a.stop(), 0);
    }
  });
}

test("-udp.engine: the engine is logged once at start; an unknown one exits 2 with usage", async () => {
  const s = await startServer(`example.org {\n    whoami\n}\n`);
  const lines = s.logs.filter((l) => l.msg === "udp engine");
  assert.equal(await s.stop(), 0);
  assert.deepEqual(
    lines.map((l) => l.engine),
    [UDP_ENGINES.at(-1)],
    "batched where it is built (Linux), else dgram",
  );
  const bad = await run(process.execPath, [BIN, "-udp.engine", "turbo"]).catch(
    (e: { code: number; stderr: string }) => e,
  );
  assert.equal((bad as { code: number }).code, 2);
  assert.match((bad as { stderr: string }).stderr, /-udp\.engine: 'turbo' is not one of dgram, batched/);
});
