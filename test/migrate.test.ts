// `clusterdns migrate`, as an operator runs it: the ConfigMap kubectl prints, from a file or stdin.
// kube-dns's stub domain and upstreams end up where queries go: a server started on the translated
// Corefile's stub block forwards to the stub domain's own server.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCorefile } from "../src/corefile/parser.ts";
import { serveTable, type RecordedQuery } from "./helpers/recording-dns-server.ts";
import { startServer, ROOT } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";

const BIN = join(ROOT, "bin", "clusterdns");

/** Runs `clusterdns ARGS` with `stdin`; resolves with the exit code and output. */
function clusterdns(args: string[], stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

const kubeDnsConfigMap = (data: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-dns
  namespace: kube-system
data:
${data}`;

test("migrate kube-dns: the stub domain's block forwards to its server, upstreams replace resolv.conf", async (t) => {
  const seen: RecordedQuery[] = [];
  const stub = await serveTable({ "www.corp.example.": { A: ["192.0.2.7"] } }, "127.0.0.1", 0, (q) =>
    seen.push(q),
  );
  t.after(() => stub.close());
  const cm = kubeDnsConfigMap(`  stubDomains: |
    {"corp.example": ["127.0.0.1:${stub.port}", "ns1.corp.example"]}
  upstreamNameservers: |
    ["192.0.2.53", "[2001:db8::53]:5353"]
`);
  const r = await clusterdns(["migrate", "kube-dns", "-"], cm);
  // The hostname is not carried over: exit 1, with the Corefile printed all the same.
  assert.equal(r.code, 1, r.stderr);
  assert.equal(
    r.stderr,
    "clusterdns migrate: stdin:7: stubDomains: corp.example: ns1.corp.example is a hostname: left out (forward takes IP addresses only)\n",
  );
  const blocks = parseCorefile(r.stdout, "translated");
  assert.deepEqual(
    blocks.map((b) => b.keys.map((k) => k.text).join(" ")),
    [".:53", "corp.example:53"],
  );
  const forward = blocks[0].directives.find((d) => d.name === "forward")!;
  assert.deepEqual(
    forward.args.map((a) => a.text),
    [".", "192.0.2.53", "[2001:db8::53]:5353"],
  );

  // The stub block as written, on a free port instead of 53.
  const stubBlock = r.stdout.slice(r.stdout.indexOf("corp.example:53 {")).replace(":53 {", " {");
  const s = await startServer(stubBlock);
  t.after(() => s.stop());
  const answer = await dig(s.port, "www.corp.example", "A");
  assert.equal(answer.status, "NOERROR");
  assert.deepEqual(answer.answer, ["www.corp.example. 30 IN A 192.0.2.7"]);
  assert.ok(
    seen.some((q) => q.name.toLowerCase().startsWith("www.corp.example") && q.type === "A"),
    "asked the stub domain's server",
  );
});

test("migrate kube-dns: a placeholder server exits 1 with the rest printed; typographic quotes get one line", async () => {
  const placeholder = await clusterdns(
    ["migrate", "kube-dns", "-"],
    kubeDnsConfigMap(
      `  stubDomains: |\n    {"consul.local": ["CUSTOM_DNS_POD_IP"], "corp.example": ["192.0.2.9"]}\n`,
    ),
  );
  assert.equal(placeholder.code, 1);
  assert.match(placeholder.stdout, /^corp\.example:53 \{$/m, "the rest is printed");
  assert.doesNotMatch(placeholder.stdout, /consul\.local/);
  assert.match(
    placeholder.stderr,
    /^clusterdns migrate: stdin:7: stubDomains: consul\.local: CUSTOM_DNS_POD_IP is a placeholder/,
  );

  const quotes = await clusterdns(
    ["migrate", "kube-dns", "-"],
    kubeDnsConfigMap(`  stubDomains: |\n    {\n      \u201ccorp.example\u201d: ["192.0.2.9"]\n    }\n`),
  );
  assert.equal(quotes.code, 1);
  assert.equal(quotes.stdout, "");
  assert.match(
    quotes.stderr,
    /^clusterdns migrate: stdin:9: stubDomains is not JSON \(it stops at '\u201c' in column 3\): it holds typographic quotes/,
  );
  assert.equal(quotes.stderr.split("\n").length, 2, `one line: ${quotes.stderr}`);
});

test("migrate kube-dns: a stub domain written twice (case, trailing dot) is one block with both servers", async () => {
  const r = await clusterdns(
    ["migrate", "kube-dns", "-"],
    kubeDnsConfigMap(
      `  stubDomains: |\n    {"corp.example": ["192.0.2.1"], "CORP.example.": ["192.0.2.2", "192.0.2.1"]}\n`,
    ),
  );
  assert.equal(r.code, 0, r.stderr);
  // The Corefile printed loads: one block for the domain, not two that clash.
  const blocks = parseCorefile(r.stdout, "translated");
  assert.deepEqual(
    blocks.map((b) => b.keys.map((k) => k.text).join(" ")),
    [".:53", "corp.example:53"],
  );
  const forward = blocks[1].directives.find((d) => d.name === "forward")!;
  assert.deepEqual(
    forward.args.map((a) => a.text),
    [".", "192.0.2.1", "192.0.2.2"],
  );
  assert.equal(
    r.stderr,
    "clusterdns migrate: stdin:7: stubDomains: CORP.example. is corp.example written again: its servers are joined to it\n",
  );
});

test("migrate kube-dns: federations are refused, and nothing is printed to apply", async () => {
  const r = await clusterdns(
    ["migrate", "kube-dns", "-"],
    kubeDnsConfigMap(`  federations: '{"prod": "prod.example.com"}'\n`),
  );
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    /^clusterdns migrate: stdin:7: federations: kube-dns federations are not supported by clusterdns/,
  );
  assert.equal(r.stderr.split("\n").length, 2, "one line");
});

test("migrate kube-dns on CoreDNS's ConfigMap, or on no ConfigMap, says what to run instead", async () => {
  const coredns = await clusterdns(["migrate", "kube-dns", join(ROOT, "deploy", "base", "configmap.yaml")]);
  assert.equal(coredns.code, 1);
  assert.match(
    coredns.stderr,
    /holds a Corefile: it is CoreDNS's ConfigMap, so run clusterdns migrate coredns /,
  );
  const corefile = await clusterdns(["migrate", "kube-dns", join(ROOT, "Corefile.example")]);
  assert.equal(corefile.code, 1);
  assert.match(
    corefile.stderr,
    /is not a ConfigMap: .*kubectl -n kube-system get configmap kube-dns -o yaml/,
  );
});

test("migrate coredns: the ConfigMap's lines, as in the file, and exit 1 when a line does not run", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-migrate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "coredns.yaml");
  const cm = readFileSync(join(ROOT, "deploy", "base", "configmap.yaml"), "utf8").replace(
    "    loop\n",
    "    loop\n    route53 example.org.:Z1\n",
  );
  writeFileSync(file, cm);
  const r = await clusterdns(["migrate", "coredns", file]);
  assert.equal(r.code, 1);
  const line = cm.split("\n").findIndex((l) => l.includes("route53")) + 1;
  assert.ok(r.stdout.includes(`${file}:${line}  missing      route53 example.org.:Z1\n`), r.stdout);
  assert.match(
    r.stdout,
    /clusterdns would not start on this Corefile: of its 19 lines, 1 not served \(missing\), 5 served differently/,
  );
  // Without it, the Corefile runs: exit 0 with the five differences as notes; --strict fails them.
  const runs = join(dir, "runs.yaml");
  writeFileSync(runs, readFileSync(join(ROOT, "deploy", "base", "configmap.yaml"), "utf8"));
  const ok = await clusterdns(["migrate", "coredns", runs]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(
    ok.stdout,
    /clusterdns runs this Corefile: of its 18 lines, 13 served the same, 5 differently/,
  );
  const strict = await clusterdns(["migrate", "coredns", "--strict", runs]);
  assert.equal(strict.code, 1);

  // The same from stdin, as `kubectl get cm coredns -o yaml | clusterdns migrate coredns -`.
  const piped = await clusterdns(["migrate", "coredns", "-"], cm);
  assert.equal(piped.code, 1);
  assert.ok(piped.stdout.includes(`stdin:${line}  missing      route53 example.org.:Z1\n`), piped.stdout);
});

test("migrate coredns: the lines of coredns-custom's keys are named at their lines of its file", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-migrate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const coredns = readFileSync(join(ROOT, "deploy", "base", "configmap.yaml"), "utf8").replace(
    "    loop\n",
    "    loop\n    import custom/*.override\n",
  );
  writeFileSync(join(dir, "coredns.yaml"), coredns);
  const custom = [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    "  name: coredns-custom",
    "data:",
    "  bad.override: |",
    "    log",
    "    route53 example.org.:Z1",
    "",
  ].join("\n");
  writeFileSync(join(dir, "custom.yaml"), custom);
  const r = await clusterdns(["migrate", "coredns", join(dir, "coredns.yaml"), join(dir, "custom.yaml")]);
  assert.equal(r.code, 1);
  assert.doesNotMatch(r.stdout, /\/etc\/coredns/);
  assert.match(r.stdout, new RegExp(`\\n${join(dir, "custom.yaml")}:7 +same +log\\n`));
  assert.match(
    r.stdout,
    new RegExp(`\\n${join(dir, "custom.yaml")}:8 +missing +route53 example\\.org\\.:Z1\\n`),
  );
});

test("migrate coredns: a path into the ConfigMap is shown as the Corefile writes it, not where it was checked", async () => {
  const file = join(ROOT, "test", "fixtures", "corpus", "k3s-rendered.yaml");
  const r = await clusterdns(["migrate", "coredns", file]);
  const line =
    readFileSync(file, "utf8")
      .split("\n")
      .findIndex((l) => l.includes("hosts /etc/coredns/NodeHosts {")) + 1;
  assert.match(r.stdout, new RegExp(`\\n${file}:${line} +\\w+ +hosts /etc/coredns/NodeHosts \\{\\n`));
  assert.doesNotMatch(r.stdout, /clusterdns-etc-coredns-/);
});

test("migrate coredns: a ConfigMap key nothing reads gets a warning line, at its line", async () => {
  const cm = readFileSync(join(ROOT, "test", "fixtures", "corpus", "k3s-rendered.yaml"), "utf8");
  const r = await clusterdns(["migrate", "coredns", "-"], cm.replace("  NodeHosts: |", "  NodeHost: |"));
  const line = cm.split("\n").indexOf("  NodeHosts: |") + 1;
  assert.match(
    r.stderr,
    new RegExp(`^clusterdns migrate: warning: stdin:${line}: data\\.NodeHost is read by nothing`, "m"),
  );
});

test("migrate coredns: a Corefile with no server block is refused as -validate refuses it", async () => {
  const r = await clusterdns(["migrate", "coredns", "-"], "# nothing here yet\n");
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    "clusterdns migrate: stdin: the Corefile has no server block: nothing would be served\n",
  );
});

test("migrate: a wrong command line is a usage error (exit 2); -help is not", async () => {
  for (const args of [
    ["migrate"],
    ["migrate", "bind"],
    ["migrate", "coredns"],
    ["migrate", "kube-dns", "a", "b"],
    ["migrate", "kube-dns", "--strict", "a"],
    ["migrate", "coredns", "--domain", "x", "f"],
  ]) {
    const r = await clusterdns(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /^clusterdns migrate: .*\nUsage: clusterdns migrate kube-dns FILE/);
  }
  const help = await clusterdns(["migrate", "-help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: clusterdns migrate kube-dns FILE/);
  const missing = await clusterdns(["migrate", "coredns", "/nonexistent/coredns.yaml"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^clusterdns migrate: cannot read \/nonexistent\/coredns\.yaml: ENOENT/);
});
