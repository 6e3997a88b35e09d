// Every kustomization under deploy/ (deploy/, autoscaler/, node-local/ and its transparent/ variant,
// distributions/*) built by a real `kubectl kustomize`: it must build, and build objects of real kinds
// with real fields. The kubectl is $KUBECTL, else the one on PATH: Debian's kubernetes-client (1.20,
// whose kustomize is v2.0.3), which `./dev test` installs; where another kubectl owns /usr/bin/kubectl
// (the google-cloud-sdk package does) Debian's cannot install beside it, so point $KUBECTL at the one to
// check. A missing kubectl fails here: CI installs it, so a skip would only hide a broken overlay.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import type * as k8s from "@kubernetes/client-node";
import { KINDS, parseYaml, schemaErrors } from "./helpers/manifests.ts";
import { ROOT } from "./helpers/server.ts";

const DEPLOY = join(ROOT, "deploy");
const KUBECTL = process.env.KUBECTL ?? "kubectl";
const run = promisify(execFile);

/** Every folder under `dir` (itself included) that holds a kustomization.yaml. */
function kustomizations(dir: string): string[] {
  const here = existsSync(join(dir, "kustomization.yaml")) ? [dir] : [];
  const below = readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isDirectory())
    .flatMap(kustomizations);
  return [...here, ...below];
}

const dirs = kustomizations(DEPLOY);
const version = spawnSync(KUBECTL, ["version", "--client"], { encoding: "utf8", timeout: 20_000 });

test("kubectl is installed (./dev test installs Debian's kubernetes-client)", (t) => {
  assert.equal(
    version.error,
    undefined,
    `${KUBECTL}: ${version.error?.message}; apt-get install kubernetes-client`,
  );
  t.diagnostic(`${KUBECTL}: ${version.stdout.split("\n").filter(Boolean).join("; ")}`);
});

test("the kustomizations include every variant the docs tell users to apply", () => {
  const names = dirs.map((d) => relative(ROOT, d));
  for (const want of ["deploy", "deploy/autoscaler", "deploy/node-local", "deploy/node-local/transparent"]) {
    assert.ok(names.includes(want), `${want} is a kustomization`);
  }
});

for (const dir of dirs) {
  const name = relative(ROOT, dir);
  test(`kubectl kustomize ${name}/ builds real objects`, { skip: version.error !== undefined }, async () => {
    const { stdout } = await run(KUBECTL, ["kustomize", dir], { timeout: 60_000 });
    const objects = parseYaml(stdout, `kubectl kustomize ${name}`);
    assert.ok(objects.length > 0, "some objects");
    for (const o of objects) {
      const [apiVersion, model] = KINDS[o.kind] ?? [];
      assert.ok(model, `${o.kind} is a kind deploy/ uses`);
      assert.equal(o.apiVersion, apiVersion, `${o.kind} ${o.metadata.name}`);
      assert.deepEqual(schemaErrors(o, model, `${o.kind} ${o.metadata.name}`), []);
    }
  });
}

// ---- deploy/distributions/*: each distribution's Corefile, mounts and Service ----

interface Overlay {
  /** The corpus fixture whose Corefile the overlay ships (the distribution's own, rendered). */
  corpus: string;
  /** The DNS Service it applies: name and ClusterIP; none where the distribution reconciles it. */
  service?: [string, string];
  /** Mounts as the distribution's CoreDNS: the Corefile at /etc/coredns, coredns-custom below it. */
  custom?: boolean;
  /** k3s: the NodeHosts key of the distribution's own coredns ConfigMap beside the Corefile. */
  nodeHosts?: boolean;
}
const OVERLAYS: Record<string, Overlay> = {
  "kubeadm-1.31": { corpus: "kubeadm-1.31.Corefile", service: ["kube-dns", "10.96.0.10"] },
  eks: { corpus: "eks.yaml", service: ["kube-dns", "10.100.0.10"] },
  aks: { corpus: "aks.yaml", custom: true },
  k3s: { corpus: "k3s-rendered.yaml", service: ["kube-dns", "10.43.0.10"], custom: true, nodeHosts: true },
  microk8s: { corpus: "microk8s-rendered.yaml", service: ["kube-dns", "10.152.183.10"] },
  minikube: { corpus: "minikube.yaml", service: ["kube-dns", "10.96.0.10"] },
  kubespray: { corpus: "kubespray-coredns-rendered.yaml", service: ["coredns", "10.233.0.3"] },
};
const CORPUS = join(ROOT, "test", "fixtures", "corpus");

/** The Corefile of a corpus fixture: the file itself, or its ConfigMap's Corefile key. */
function corpusCorefile(file: string): string {
  const text = readFileSync(join(CORPUS, file), "utf8");
  if (file.endsWith(".Corefile")) return text;
  const cm = parseYaml(text, file).find((o) => o.kind === "ConfigMap") as unknown as k8s.V1ConfigMap;
  return cm.data!.Corefile;
}

test("every overlay in deploy/distributions/ is checked here and named in docs/distributions.md", () => {
  const docs = readFileSync(join(ROOT, "docs", "distributions.md"), "utf8");
  for (const name of readdirSync(join(DEPLOY, "distributions"))) {
    assert.ok(name in OVERLAYS, `${name}: its expectations are in OVERLAYS`);
    assert.ok(docs.includes(`deploy/distributions/${name}/`), `docs/distributions.md names ${name}`);
  }
});

for (const [name, want] of Object.entries(OVERLAYS)) {
  test(`deploy/distributions/${name}/: its distribution's Corefile, mounts and Service`, async () => {
    const { stdout } = await run(KUBECTL, ["kustomize", join(DEPLOY, "distributions", name)], {
      timeout: 60_000,
    });
    const objects = parseYaml(stdout, name);
    const get = <T>(kind: string, n: string) =>
      objects.find((o) => o.kind === kind && o.metadata.name === n) as T;
    const cm = get<k8s.V1ConfigMap>("ConfigMap", "clusterdns");
    assert.equal(cm.data!.Corefile, corpusCorefile(want.corpus), `the Corefile of ${want.corpus}`);

    const services = objects.filter((o) => o.kind === "Service") as k8s.V1Service[];
    const wantServices = want.service ? [want.service] : [];
    assert.deepEqual(
      services.map((s) => [s.metadata!.name, s.spec!.clusterIP]),
      wantServices,
    );
    for (const s of services) assert.deepEqual(s.spec!.selector, { "k8s-app": "kube-dns" });

    const spec = get<k8s.V1Deployment>("Deployment", "clusterdns").spec!.template.spec!;
    const container = spec.containers[0];
    const dir = want.custom ? "/etc/coredns" : "/etc/clusterdns";
    assert.deepEqual(container.args, ["-conf", `${dir}/Corefile`]);
    const mounts = Object.fromEntries(container.volumeMounts!.map((m) => [m.mountPath, m.name]));
    const volumes = Object.fromEntries(spec.volumes!.map((v) => [v.name, v]));
    assert.equal(mounts[dir], "config");
    if (want.custom) {
      const custom = volumes[mounts["/etc/coredns/custom"]];
      assert.deepEqual(
        custom?.configMap,
        { name: "coredns-custom", optional: true },
        "coredns-custom, optional",
      );
    } else assert.equal(Object.keys(mounts).length, 1, "only the Corefile");
    const config = volumes.config;
    if (want.nodeHosts) {
      assert.deepEqual(config.projected!.sources, [
        { configMap: { name: "clusterdns", items: [{ key: "Corefile", path: "Corefile" }] } },
        { configMap: { name: "coredns", optional: true, items: [{ key: "NodeHosts", path: "NodeHosts" }] } },
      ]);
      assert.match(cm.data!.Corefile, /hosts \/etc\/coredns\/NodeHosts /);
    } else assert.equal(config.configMap!.name, "clusterdns");
  });
}
