// The connection loader: every kubeconfig field it reads, file vs -data, paths relative to the
// kubeconfig's folder, context selection and its errors, the `endpoint` and `tls` options, in-cluster
// settings from the environment and a service account folder, and the order the sources are tried in.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { KubeError, KubeErrorCode } from "./api.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import type { LoadEnv } from "./kubeconfig.ts";

const openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].some((p) => existsSync(p));

let dir: string;
/** A self-signed certificate and its key, PEM. */
let cert: Buffer;
let key: Buffer;
let serial = 0;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "clusterdns-kubeconfig-"));
  if (!openssl) return;
  const [k, c] = [join(dir, "self.key"), join(dir, "self.crt")];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-keyout",
      k,
      "-out",
      c,
      "-days",
      "1",
      "-subj",
      "/CN=kubeconfig-test",
    ]),
    { stdio: "pipe" },
  );
  cert = readFileSync(c);
  key = readFileSync(k);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh folder for one test. */
function folder(): string {
  const d = join(dir, `t${serial++}`);
  mkdirSync(d, { recursive: true });
  return d;
}

interface Doc {
  clusters?: { name: string; cluster: Record<string, unknown> }[];
  users?: { name: string; user: Record<string, unknown> }[];
  contexts?: { name: string; context: Record<string, unknown> }[];
  "current-context"?: string;
}

/** A kubeconfig with one context "main" for this cluster and user, plus `more`. */
function kubeconfig(
  at: string,
  cluster: Record<string, unknown>,
  user?: Record<string, unknown>,
  more: Doc = {},
) {
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }, ...(more.clusters ?? [])],
    users: [...(user ? [{ name: "u", user }] : []), ...(more.users ?? [])],
    contexts: [
      { name: "main", context: { cluster: "c", user: user ? "u" : undefined } },
      ...(more.contexts ?? []),
    ],
    "current-context": "current-context" in more ? more["current-context"] : "main",
  };
  const path = join(at, "config");
  writeFileSync(path, stringify(doc));
  return path;
}

/** Asserts that `fn` throws a CONFIG KubeError whose message matches. */
function configFails(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KubeError, String(e));
    assert.equal(e.code, KubeErrorCode.CONFIG);
    assert.match(e.message, message);
    return true;
  });
}

const b64 = (b: Buffer) => b.toString("base64");

describe("kubeconfig files", { skip: !openssl && "openssl not installed" }, () => {
  test("every cluster and user field; files are read relative to the kubeconfig's folder", () => {
    const d = folder();
    mkdirSync(join(d, "pki"));
    writeFileSync(join(d, "pki", "ca.crt"), cert);
    writeFileSync(join(d, "pki", "client.crt"), cert);
    writeFileSync(join(d, "pki", "client.key"), key);
    writeFileSync(join(d, "token"), "  file-token\n");
    const path = kubeconfig(
      d,
      {
        server: "https://api.example:6443/prefix/",
        "certificate-authority": "pki/ca.crt",
        "tls-server-name": "kubernetes.default.svc",
        "disable-compression": true,
      },
      {
        "client-certificate": "pki/client.crt",
        "client-key": "./pki/client.key",
        tokenFile: "token",
        token: "inline-token",
        as: "jane",
        "as-uid": "1234",
        "as-groups": ["dev", "ops"],
      },
    );
    const c = loadKubeConfig({ kubeconfig: path });
    assert.equal(c.server, "https://api.example:6443/prefix");
    assert.equal(c.source, `kubeconfig ${path} (context main)`);
    assert.deepEqual(c.tls, { ca: cert, cert, key, insecure: false, serverName: "kubernetes.default.svc" });
    // The token file's content wins over `token`, as in client-go.
    assert.deepEqual(c.auth, {
      token: "file-token",
      tokenFile: join(d, "token"),
      headers: { "Impersonate-User": "jane", "Impersonate-Uid": "1234", "Impersonate-Group": ["dev", "ops"] },
    });
  });

  test("-data fields are base64 of the same PEM; a file and its -data together are an error", () => {
    const d = folder();
    const path = kubeconfig(
      d,
      { server: "https://h", "certificate-authority-data": b64(cert) },
      { "client-certificate-data": b64(cert), "client-key-data": b64(key), token: "t" },
    );
    const c = loadKubeConfig({ kubeconfig: path });
    assert.deepEqual(c.tls, { ca: cert, cert, key, insecure: false, serverName: undefined });
    assert.deepEqual(c.auth, { token: "t" });

    writeFileSync(join(d, "ca.crt"), cert);
    const both = kubeconfig(d, {
      server: "https://h",
      "certificate-authority": "ca.crt",
      "certificate-authority-data": b64(cert),
    });
    configFails(
      () => loadKubeConfig({ kubeconfig: both }),
      /certificate-authority and certificate-authority-data/,
    );
  });

  test("username and password are basic auth; with a token they are an error", () => {
    const d = folder();
    const basic = kubeconfig(d, { server: "http://h" }, { username: "admin", password: "pw" });
    assert.deepEqual(loadKubeConfig({ kubeconfig: basic }).auth, {
      basic: { username: "admin", password: "pw" },
    });
    const both = kubeconfig(d, { server: "http://h" }, { username: "admin", password: "pw", token: "t" });
    configFails(() => loadKubeConfig({ kubeconfig: both }), /token and username\/password/);
  });

  test("insecure-skip-tls-verify; with a CA it is an error on https", () => {
    const d = folder();
    const insecure = kubeconfig(d, { server: "https://h", "insecure-skip-tls-verify": true });
    assert.equal(loadKubeConfig({ kubeconfig: insecure }).tls.insecure, true);
    const plain = kubeconfig(d, { server: "http://h", "insecure-skip-tls-verify": true });
    assert.equal(loadKubeConfig({ kubeconfig: plain }).server, "http://h");
    const both = kubeconfig(d, {
      server: "https://h",
      "insecure-skip-tls-verify": true,
      "certificate-authority-data": b64(cert),
    });
    configFails(() => loadKubeConfig({ kubeconfig: both }), /contradict/);
  });

  test("client certificate and key go together; files must exist and hold PEM", () => {
    const d = folder();
    writeFileSync(join(d, "c.crt"), cert);
    writeFileSync(join(d, "c.key"), key);
    writeFileSync(join(d, "junk"), "not pem\n");
    const certOnly = kubeconfig(d, { server: "https://h" }, { "client-certificate": "c.crt" });
    configFails(
      () => loadKubeConfig({ kubeconfig: certOnly }),
      /client-certificate and client-key go together/,
    );
    const missing = kubeconfig(d, { server: "https://h", "certificate-authority": "nope.crt" });
    configFails(
      () => loadKubeConfig({ kubeconfig: missing }),
      new RegExp(`cluster "c": certificate-authority: cannot read ${join(d, "nope.crt")}`),
    );
    const junkCa = kubeconfig(d, { server: "https://h", "certificate-authority": "junk" });
    configFails(
      () => loadKubeConfig({ kubeconfig: junkCa }),
      /certificate-authority .*junk is not a PEM certificate/,
    );
    const junkKey = kubeconfig(
      d,
      { server: "https://h" },
      { "client-certificate": "c.crt", "client-key": "junk" },
    );
    configFails(() => loadKubeConfig({ kubeconfig: junkKey }), /client-key .*junk is not a PEM private key/);
    const noTokenFile = kubeconfig(d, { server: "https://h" }, { tokenFile: "gone" });
    configFails(() => loadKubeConfig({ kubeconfig: noTokenFile }), /user "u": tokenFile: cannot read/);
  });

  test("exec and auth-provider users are left to the client library, by file and context", () => {
    const d = folder();
    const exec = kubeconfig(
      d,
      { server: "https://h" },
      { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "get-token" } },
    );
    assert.deepEqual(loadKubeConfig({ kubeconfig: exec }).auth, {
      plugin: { kind: "exec", kubeconfig: exec, context: "main" },
    });
    const provider = kubeconfig(
      d,
      { server: "https://h" },
      { "auth-provider": { name: "oidc", config: {} } },
    );
    assert.deepEqual(loadKubeConfig({ kubeconfig: provider }).auth.plugin?.kind, "auth-provider");
    const both = kubeconfig(
      d,
      { server: "https://h" },
      { exec: { command: "x" }, "auth-provider": { name: "oidc" } },
    );
    configFails(() => loadKubeConfig({ kubeconfig: both }), /exec and auth-provider cannot both be set/);
  });

  test("unsupported settings are errors: proxy-url, as-user-extra", () => {
    const d = folder();
    const proxy = kubeconfig(d, { server: "https://h", "proxy-url": "http://proxy:3128" });
    configFails(() => loadKubeConfig({ kubeconfig: proxy }), /cluster "c": proxy-url is not supported/);
    const extra = kubeconfig(d, { server: "https://h" }, { as: "x", "as-user-extra": { k: ["v"] } });
    configFails(() => loadKubeConfig({ kubeconfig: extra }), /as-user-extra is not supported/);
  });

  test("contexts: the named one, else current-context; anything missing is an error naming it", () => {
    const d = folder();
    const path = kubeconfig(
      d,
      { server: "https://main" },
      { token: "t" },
      {
        clusters: [
          { name: "other", cluster: { server: "http://other:8080" } },
          { name: "empty", cluster: {} },
        ],
        contexts: [
          { name: "second", context: { cluster: "other" } },
          { name: "lost-cluster", context: { cluster: "gone" } },
          { name: "lost-user", context: { cluster: "other", user: "ghost" } },
          { name: "no-server", context: { cluster: "empty" } },
          { name: "no-cluster", context: {} },
        ],
      },
    );
    assert.equal(loadKubeConfig({ kubeconfig: path }).server, "https://main");
    const second = loadKubeConfig({ kubeconfig: path, context: "second" });
    assert.equal(second.server, "http://other:8080");
    assert.deepEqual(second.auth, {});
    configFails(
      () => loadKubeConfig({ kubeconfig: path, context: "nope" }),
      new RegExp(`^context "nope" not found \\(in ${path}\\)$`),
    );
    configFails(
      () => loadKubeConfig({ kubeconfig: path, context: "lost-cluster" }),
      /cluster "gone" .*not found/,
    );
    configFails(() => loadKubeConfig({ kubeconfig: path, context: "lost-user" }), /user "ghost" .*not found/);
    configFails(
      () => loadKubeConfig({ kubeconfig: path, context: "no-server" }),
      /cluster "empty" has no server/,
    );
    configFails(() => loadKubeConfig({ kubeconfig: path, context: "no-cluster" }), /names no cluster/);
    const noCurrent = kubeconfig(folder(), { server: "https://h" }, undefined, {
      "current-context": undefined,
    });
    configFails(
      () => loadKubeConfig({ kubeconfig: noCurrent }),
      /no current-context set and no context given/,
    );
  });

  test("bad YAML, a document that is no kubeconfig, wrong types, a bad server URL", () => {
    const d = folder();
    const bad = join(d, "bad");
    writeFileSync(bad, "clusters:\n  - name: c\n    cluster: {server: https://h\n");
    configFails(
      () => loadKubeConfig({ kubeconfig: bad }),
      new RegExp(`kubeconfig ${bad} is not valid YAML: .*line`),
    );
    const list = join(d, "list");
    writeFileSync(list, "- a\n- b\n");
    configFails(() => loadKubeConfig({ kubeconfig: list }), /not a kubeconfig/);
    const typed = kubeconfig(d, { server: 6443 });
    configFails(() => loadKubeConfig({ kubeconfig: typed }), /cluster "c": server must be a string/);
    const flag = kubeconfig(d, { server: "https://h", "insecure-skip-tls-verify": "yes" });
    configFails(() => loadKubeConfig({ kubeconfig: flag }), /insecure-skip-tls-verify must be true or false/);
    const groups = kubeconfig(d, { server: "https://h" }, { "as-groups": "dev" });
    configFails(() => loadKubeConfig({ kubeconfig: groups }), /as-groups must be a list of strings/);
    const scheme = kubeconfig(d, { server: "ftp://h" });
    configFails(() => loadKubeConfig({ kubeconfig: scheme }), /scheme must be http or https/);
    configFails(
      () => loadKubeConfig({ kubeconfig: join(d, "missing") }),
      /kubeconfig: \S*missing does not exist$/,
    );
  });
});

describe("endpoint and tls options", { skip: !openssl && "openssl not installed" }, () => {
  test("an endpoint without credentials; tls files are read at load", () => {
    const c = loadKubeConfig({ endpoint: "http://127.0.0.1:8080/" });
    assert.deepEqual(c, {
      server: "http://127.0.0.1:8080",
      source: "endpoint",
      tls: { insecure: false },
      auth: {},
    });
    const d = folder();
    writeFileSync(join(d, "c.crt"), cert);
    writeFileSync(join(d, "c.key"), key);
    const tls = { cert: join(d, "c.crt"), key: join(d, "c.key"), ca: join(d, "c.crt") };
    assert.deepEqual(loadKubeConfig({ endpoint: "https://h", tls }).tls, {
      insecure: false,
      cert,
      key,
      ca: cert,
    });
    configFails(
      () => loadKubeConfig({ endpoint: "https://h", tls: { ...tls, ca: join(d, "none") } }),
      new RegExp(`tls: cannot read ${join(d, "none")}`),
    );
    configFails(() => loadKubeConfig({ endpoint: "ftp://x" }), /scheme must be http or https/);
    configFails(() => loadKubeConfig({ endpoint: "not a url" }), /is not a URL/);
  });
});

describe("where the settings come from", { skip: !openssl && "openssl not installed" }, () => {
  /** A service account folder with a token and a CA. */
  function serviceAccount(token = "sa-token\n"): string {
    const d = folder();
    writeFileSync(join(d, "token"), token);
    writeFileSync(join(d, "ca.crt"), cert);
    return d;
  }

  test("in-cluster from KUBERNETES_SERVICE_HOST/PORT and the service account folder; IPv6 in brackets", () => {
    const sa = serviceAccount();
    const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const c = loadKubeConfig({}, { env, serviceAccountDir: sa });
    assert.deepEqual(c, {
      server: "https://10.96.0.1:443",
      source: "in-cluster",
      tls: { ca: cert, insecure: false },
      auth: { token: "sa-token", tokenFile: join(sa, "token") },
    });
    const v6 = { KUBERNETES_SERVICE_HOST: "fd00:10:96::1", KUBERNETES_SERVICE_PORT: "443" };
    assert.equal(
      loadKubeConfig({}, { env: v6, serviceAccountDir: sa }).server,
      "https://[fd00:10:96::1]:443",
    );
    configFails(
      () => loadKubeConfig({}, { env, serviceAccountDir: folder() }),
      /in-cluster service account token: cannot read/,
    );
    configFails(
      () => loadKubeConfig({}, { env, serviceAccountDir: serviceAccount("\n") }),
      /token: .* is empty/,
    );
  });

  test("kubeconfig option, then endpoint, then in-cluster, then $KUBECONFIG (first file), then ~/.kube/config", () => {
    const sa = serviceAccount();
    const home = folder();
    mkdirSync(join(home, ".kube"));
    const homeConfig = kubeconfig(join(home, ".kube"), { server: "https://home" });
    const first = kubeconfig(folder(), { server: "https://first" });
    const second = kubeconfig(folder(), { server: "https://second" });
    const explicit = kubeconfig(folder(), { server: "https://explicit" });
    const cluster = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "6443" };
    const all: LoadEnv = {
      env: { ...cluster, KUBECONFIG: `${first}:${second}` },
      home,
      serviceAccountDir: sa,
    };

    assert.equal(
      loadKubeConfig({ kubeconfig: explicit, endpoint: "http://e" }, all).server,
      "https://explicit",
    );
    assert.equal(loadKubeConfig({ endpoint: "http://e" }, all).server, "http://e");
    assert.equal(loadKubeConfig({}, all).server, "https://10.0.0.1:6443");
    // Both variables are needed for in-cluster, as in client-go.
    const kc = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBECONFIG: `:${first}:${second}` };
    assert.equal(loadKubeConfig({}, { ...all, env: kc }).server, "https://first");
    assert.equal(loadKubeConfig({}, { ...all, env: {} }).server, "https://home");
    assert.equal(loadKubeConfig({}, { ...all, env: {} }).source, `kubeconfig ${homeConfig} (context main)`);

    configFails(
      () => loadKubeConfig({}, { ...all, env: { KUBECONFIG: `${join(home, "gone")}:${second}` } }),
      /\$KUBECONFIG \(only its first file is read\) kubeconfig: \S*gone does not exist$/,
    );
    configFails(
      () => loadKubeConfig({}, { env: {}, home: folder() }),
      /not in a cluster .*no \$KUBECONFIG.* kubeconfig: \S*\.kube\/config does not exist; outside a cluster, name one with `kubeconfig FILE` .*`objects FILE`/,
    );
  });
});
