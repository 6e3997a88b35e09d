// `clusterdns -validate`: the checks of a start-up, for the CI of a repository of Corefiles. It reads
// every file a Corefile names, reports every mistake on a line of its own with file:line, and opens no
// port and asks no API: ports held by others and an API server that is listening see nothing of it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/server.ts";

const BIN = join(ROOT, "bin", "clusterdns");

/** Writes `files` (Corefile first) to a fresh folder and runs `clusterdns -validate -conf Corefile`. */
async function validate(
  t: { after(fn: () => void): void },
  files: Record<string, string>,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, "-validate", "-conf", join(dir, "Corefile")],
      // No cluster around: no service account, no $KUBECONFIG, an empty home.
      { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, ...env }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr, dir }),
    );
  });
}

test("kubeadm's Corefile is valid without a cluster: where the API is comes from the pod", async (t) => {
  const r = await validate(t, { Corefile: readFileSync(join(ROOT, "Corefile.example"), "utf8") });
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `clusterdns: ${join(r.dir, "Corefile")}: valid\n`);
});

test("every mistake is reported, one line each, in the file's order, with file:line", async (t) => {
  const corefile = [
    "example.org {", // 1
    "    file db.example.org", // 2
    "    frobnicate", // 3
    "}", // 4
    "cluster.local {", // 5
    "    kubernetes cluster.local {", // 6
    "        kubeconfig kubeconfig.yaml", // 7
    "    }", // 8
    "}", // 9
    "objects.local {", // 10
    "    kubernetes objects.local {", // 11
    "        objects objects.yaml", // 12
    "    }", // 13
    "}", // 14
    "quic://.:853 {", // 15
    "    whoami", // 16
    "}", // 17
    ". {", // 18
    "    route53 example.org.:Z1D633PJN98FT9", // 19
    "    forward . 192.0.2.1", // 20
    "}", // 21
  ].join("\n");
  const objects =
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  clusterIP: 10.96.0.500\n";
  const r = await validate(t, { Corefile: corefile, "objects.yaml": objects });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  const at = (line: number) => new RegExp(`^clusterdns: ${join(r.dir, "Corefile")}:${line} - `);
  const want: [number, RegExp][] = [
    [2, /file: .*db\.example\.org: cannot read zone file: ENOENT/],
    [3, /Unknown directive 'frobnicate'/],
    [6, /kubernetes: kubeconfig: .*kubeconfig\.yaml does not exist$/],
    [11, /kubernetes: .*objects\.yaml:1: .*'10\.96\.0\.500' is not an IP address/],
    [15, /invalid server block key 'quic:\/\/\.:853'/],
    [19, /plugin route53 of CoreDNS is not supported by clusterdns: no cloud DNS backends/],
  ];
  assert.equal(lines.length, want.length, r.stderr);
  for (const [i, [line, what]] of want.entries()) {
    assert.match(lines[i], at(line));
    assert.match(lines[i], what);
  }
});

test("no port is opened and no API asked: held ports and a listening API server see nothing", async (t) => {
  let connections = 0;
  const api = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => api.listen(0, "127.0.0.1", r));
  t.after(() => api.close());
  const port = (api.address() as AddressInfo).port;
  const kubeconfig = [
    "apiVersion: v1",
    "kind: Config",
    `clusters: [{ name: c, cluster: { server: "http://127.0.0.1:${port}" } }]`,
    "users: [{ name: u, user: { token: t } }]",
    "contexts: [{ name: x, context: { cluster: c, user: u } }]",
    "current-context: x",
  ].join("\n");
  // The API server's own port serves as a port someone else holds: DNS on it would not start, nor
  // health on another held one.
  const held = createServer();
  await new Promise<void>((r) => held.listen(0, "127.0.0.1", r));
  t.after(() => held.close());
  const healthPort = (held.address() as AddressInfo).port;
  const corefile = `.:${port} {\n    health 127.0.0.1:${healthPort}\n    kubernetes cluster.local {\n        kubeconfig kubeconfig.yaml\n    }\n}\nexample.org:${port} {\n    kubernetes example.org {\n        endpoint http://127.0.0.1:${port}\n    }\n}\n`;
  const r = await validate(t, { Corefile: corefile, "kubeconfig.yaml": kubeconfig });
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
  assert.equal(connections, 0, "the API server was not asked");
});

test("blocks are checked together too: a zone twice on one port", async (t) => {
  // Both on 53: the default port, and written out.
  const r = await validate(t, {
    Corefile: "example.org {\n    whoami\n}\nexample.org:53 {\n    whoami\n}\n",
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /Corefile:4 - Error during parsing: cannot serve 'example\.org:53': zone example\.org\. on port 53 is already defined at .*Corefile:1\n$/,
  );
});

/** Runs `clusterdns -validate` with `args` in `dir`, `stdin` piped in. */
function validateArgs(
  dir: string,
  args: string[],
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, "-validate", ...args],
      { cwd: dir, env: { PATH: process.env.PATH, HOME: dir }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

/** k3s's coredns ConfigMap, rendered: NodeHosts is mounted at /etc/coredns/NodeHosts, coredns-custom's
 * keys at /etc/coredns/custom/. */
const K3S = `apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
    .:53 {
        errors
        health
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
          pods insecure
          fallthrough in-addr.arpa ip6.arpa
        }
        hosts /etc/coredns/NodeHosts {
          ttl 60
          reload 15s
          fallthrough
        }
        prometheus :9153
        forward . /etc/resolv.conf
        cache 30
        loop
        reload
        loadbalance
        import /etc/coredns/custom/*.override
    }
    import /etc/coredns/custom/*.server
  NodeHosts: |
    192.0.2.10 node-a
`;

const CUSTOM = (override: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns-custom
  namespace: kube-system
data:
  log.override: |
    ${override}
  example.server: |
    example.org:53 {
        whoami
    }
`;

test("a ConfigMap is validated as the pod mounts it: its keys and coredns-custom's, from files or stdin", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "coredns.yaml"), K3S);
  writeFileSync(join(dir, "custom.yaml"), CUSTOM("log"));

  // Alone: NodeHosts is found where k3s mounts it; the custom imports match nothing, as CoreDNS warns.
  const alone = await validateArgs(dir, ["-conf", "-"], K3S);
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(
    alone.stderr,
    [
      "clusterdns: warning: stdin:27: No files matching import glob pattern: /etc/coredns/custom/*.override",
      "clusterdns: warning: stdin:29: No files matching import glob pattern: /etc/coredns/custom/*.server",
      "",
    ].join("\n"),
  );
  assert.equal(alone.stdout, "clusterdns: stdin: valid\n");

  // With coredns-custom: its keys are imported, and a mistake in one is named at its line of the
  // ConfigMap's file, as a mistake in the Corefile key is.
  const both = await validateArgs(dir, ["-conf", "coredns.yaml", "-conf", "custom.yaml"]);
  assert.equal(both.stderr, "");
  assert.equal(both.code, 0);
  writeFileSync(join(dir, "custom.yaml"), CUSTOM("frobnicate"));
  const bad = await validateArgs(dir, ["-conf", "coredns.yaml", "-conf", "custom.yaml"]);
  assert.equal(bad.code, 1);
  assert.equal(
    bad.stderr,
    "clusterdns: custom.yaml:8 - Error during parsing: Unknown directive 'frobnicate'\n",
  );

  // A key that is not a `|` block has no lines of the file: its own, after the key's name.
  writeFileSync(
    join(dir, "quoted.yaml"),
    CUSTOM("log").replace("log.override: |\n    log", 'bad.override: "log\\nfrobnicate"'),
  );
  const quoted = await validateArgs(dir, ["-conf", "coredns.yaml", "-conf", "quoted.yaml"]);
  assert.equal(
    quoted.stderr,
    "clusterdns: quoted.yaml (data.bad.override):2 - Error during parsing: Unknown directive 'frobnicate'\n",
  );

  // A line of the coredns ConfigMap's NodeHosts key that hosts skips: warned at its line of the file.
  writeFileSync(
    join(dir, "coredns.yaml"),
    K3S.replace("    192.0.2.10 node-a\n", "    192.0.2.10 node-a\n    not-an-ip node-b\n"),
  );
  const hosts = await validateArgs(dir, ["-conf", "coredns.yaml", "-conf", "custom.yaml"]);
  assert.match(
    hosts.stderr,
    /^clusterdns: warning: hosts: coredns\.yaml:32: 'not-an-ip' is not an IP address; line skipped\n/,
  );
});

test("a ConfigMap key the Corefile reads nothing of is named at its line, as CoreDNS would ignore it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // k3s's NodeHosts misspelt, and an AKS key that ends in neither .override nor .server.
  writeFileSync(join(dir, "coredns.yaml"), K3S.replace("  NodeHosts: |", "  NodeHost: |"));
  writeFileSync(join(dir, "custom.yaml"), CUSTOM("log").replace("  log.override: |", "  log.conf: |"));
  const r = await validateArgs(dir, ["-conf", "coredns.yaml", "-conf", "custom.yaml"]);
  assert.equal(r.code, 0, r.stderr);
  const unread = r.stderr.split("\n").filter((l) => l.includes("read by nothing"));
  assert.deepEqual(unread, [
    "clusterdns: warning: coredns.yaml:30: data.NodeHost is read by nothing: no import or path of the Corefile names /etc/coredns/NodeHost (CoreDNS ignores it too)",
    "clusterdns: warning: custom.yaml:7: data.log.conf is read by nothing: no import or path of the Corefile names /etc/coredns/custom/log.conf (CoreDNS ignores it too)",
  ]);
  // Keys that are read (NodeHosts by hosts, *.override and *.server by imports) get no such line.
  writeFileSync(join(dir, "coredns.yaml"), K3S);
  writeFileSync(join(dir, "custom.yaml"), CUSTOM("log"));
  const ok = await validateArgs(dir, ["-conf", "coredns.yaml", "-conf", "custom.yaml"]);
  assert.equal(ok.stderr, "");
});

test("a List of ConfigMaps, as kubectl get cm coredns coredns-custom -o yaml prints it, is read the same", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const item = (cm: string) => cm.replace(/^(?=.)/gm, "    ").replace(/^ {4}/, "  - ");
  const list = `apiVersion: v1\nkind: List\nitems:\n${item(K3S)}${item(CUSTOM("frobnicate"))}`;
  const r = await validateArgs(dir, ["-conf", "-"], list);
  assert.equal(r.code, 1);
  // The mistake in coredns-custom's key, at its line of the List, and nothing about imports that
  // match nothing.
  const line = list.split("\n").findIndex((l) => l.includes("frobnicate")) + 1;
  assert.equal(
    r.stderr,
    `clusterdns: stdin:${line} - Error during parsing: Unknown directive 'frobnicate'\n`,
  );
});

test("every mistake of one block is reported, options and second lines included", async (t) => {
  const corefile = [
    ". {", // 1
    "    cache 30 {", // 2
    "        success nonsense", // 3
    "    }", // 4
    "    kubernetes cluster.local {", // 5
    "        resyncperiod 30s", // 6
    "        upstream", // 7
    "    }", // 8
    "    proxy . 192.0.2.1", // 9
    "    forward . 192.0.2.1", // 10
    "    forward . 192.0.2.2", // 11
    "    cache", // 12
    "}", // 13
  ].join("\n");
  const r = await validate(t, { Corefile: corefile });
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split("\n");
  const want: [number, RegExp][] = [
    [3, /cache: /],
    [
      6,
      /'resyncperiod' is not supported: deprecated in CoreDNS 1\.5\.0, removed in 1\.7\.0: delete the line/,
    ],
    [7, /'upstream' is not supported: removed in CoreDNS 1\.7\.0/],
    [9, /plugin proxy was removed from CoreDNS in 1\.5\.0: use forward/],
    [11, /forward: never reached: 'forward \.' at .*Corefile:10/],
    [12, /cache: this plugin can only be used once per server block/],
  ];
  assert.equal(lines.length, want.length, r.stderr);
  for (const [i, [line, what]] of want.entries()) {
    assert.match(lines[i], new RegExp(`^clusterdns: ${join(r.dir, "Corefile")}:${line} - `), lines[i]);
    assert.match(lines[i], what);
  }
});

test("an unrendered template is named as one, every placeholder at its line", async (t) => {
  const r = await validate(t, {
    Corefile:
      ".:53 {\n    kubernetes %{CLUSTER_DOMAIN}% in-addr.arpa {\n    }\n    forward . {{ .Values.upstream }}\n}\n",
  });
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, r.stderr);
  assert.match(
    lines[0],
    /Corefile:2 - .*'%\{CLUSTER_DOMAIN\}%' is a template placeholder \(k3s\) that was never filled in: render the template first/,
  );
  assert.match(lines[1], /Corefile:4 - .*'\{\{ \.Values\.upstream \}\}' is a template placeholder/);
});

test("a Corefile with no server block (empty, comments, snippets only) is refused, by file", async (t) => {
  for (const text of ["", "# nothing here yet\n\n", "(common) {\n    errors\n}\n"]) {
    const r = await validate(t, { Corefile: text });
    assert.equal(r.code, 1, JSON.stringify(text));
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `clusterdns: ${join(r.dir, "Corefile")}: the Corefile has no server block: nothing would be served\n`,
    );
  }
  // An empty Corefile key of the coredns ConfigMap, the same.
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\ndata:\n  Corefile: ""\n';
  const r = await validateArgs(dir, ["-conf", "-"], cm);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "clusterdns: stdin (data.Corefile): the Corefile has no server block: nothing would be served\n",
  );
});

test("health, ready or prometheus on a DNS port is refused at its line, naming the DNS block", async (t) => {
  const corefile = [
    ".:5324 {", // 1
    "    health 127.0.0.1:5324", // 2: `.` listens on every address
    "    whoami", // 3
    "}", // 4
    "example.org:5325 {", // 5
    "    bind 127.0.0.1", // 6
    "    ready 127.0.0.2:5325", // 7: another address, no clash
    "    prometheus :5325", // 8: every address
    "}", // 9
  ].join("\n");
  const r = await validate(t, { Corefile: corefile });
  assert.equal(r.code, 1);
  const file = join(r.dir, "Corefile");
  const taken = (line: number, what: string, block: string, at: number) =>
    `clusterdns: ${file}:${line} - Error during parsing: ${what} is taken by the DNS server block '${block}' (${file}:${at}), which listens on TCP as well as UDP: give ${what.split(":")[0]} another port\n`;
  assert.equal(
    r.stderr,
    taken(2, "health: 127.0.0.1:5324", ".:5324", 1) + taken(8, "prometheus: :5325", "example.org:5325", 5),
  );

  // Another block's DNS address, the same; beside it, the other family's loopback is free.
  const across = [
    "example.net:5326 {", // 1
    "    bind ::1", // 2
    "    whoami", // 3
    "}", // 4
    "example.com {", // 5
    "    prometheus 127.0.0.1:5326", // 6: IPv4, no clash
    "    health [::1]:5326", // 7: example.net's
    "}", // 8
  ].join("\n");
  const r2 = await validate(t, { Corefile: across });
  assert.equal(r2.code, 1);
  const file2 = join(r2.dir, "Corefile");
  assert.equal(
    r2.stderr,
    `clusterdns: ${file2}:7 - Error during parsing: health: [::1]:5326 is taken by the DNS server block 'example.net:5326' (${file2}:1), which listens on TCP as well as UDP: give health another port\n`,
  );
});

test("an option left out does not make its directive's own line a second mistake", async (t) => {
  const corefile = [
    "example.test {", // 1
    "    dnssec {", // 2
    "        key file Kexample.test.+013+00000", // 3
    "    }", // 4
    "    transfer {", // 5
    "        to not-an-address", // 6
    "    }", // 7
    "    whoami", // 8
    "}", // 9
  ].join("\n");
  const r = await validate(t, { Corefile: corefile });
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split("\n");
  // Not also "2 - dnssec: no keys" and "5 - transfer: 'to' is required": the lines left out say why.
  assert.equal(lines.length, 2, r.stderr);
  assert.match(lines[0], /Corefile:3 - .*dnssec: .*Kexample\.test\.\+013\+00000\.key: ENOENT/);
  assert.match(lines[1], /Corefile:6 - .*transfer: to: 'not-an-address' is not/);
});
