// deploy/node-local/, the DaemonSet of node-local mode, and its transparent variant, checked without a
// cluster: real fields of each kind, the shape a node-local DNS needs (hostNetwork, system-node-critical,
// a surge with no hostPorts, NET_ADMIN on the one container that sets the node up and nothing more), a
// Corefile that sets up, probes where health and ready listen, a metrics Service on prometheus's port,
// and RBAC equal to deploy/'s.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { KINDS, parseYaml, schemaErrors, type KObject } from "./helpers/manifests.ts";
import { ROOT } from "./helpers/server.ts";
import { parseCorefile } from "../src/corefile/parser.ts";
import { plugins } from "../src/plugins/index.ts";
import { Instance } from "../src/server/instance.ts";
import { parseListenAddress } from "../src/http/listener.ts";
import { parseDuration } from "../src/corefile/args.ts";
import type { Directive } from "../src/corefile/types.ts";

const DEPLOY = join(ROOT, "deploy");
const DIR = join(DEPLOY, "node-local");
// The objects, in base/: node-local/ and node-local/transparent/ both build on it.
const BASE = join(DIR, "base");
const LINK_LOCAL = "169.254.20.10";

const read = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort();
const files = read(BASE);
const objects = files.flatMap((f) => parseYaml(readFileSync(join(BASE, f), "utf8"), f));
const one = <T>(list: KObject[], kind: string): T => {
  const found = list.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0] as T;
};
const kustomization = (dir: string) =>
  parseYaml(readFileSync(join(dir, "kustomization.yaml"), "utf8"), dir)[0] as KObject & {
    resources?: string[];
    bases?: string[];
    patchesStrategicMerge?: string[];
    images?: unknown[];
  };

const daemonSet = one<k8s.V1DaemonSet>(objects, "DaemonSet");
const configMap = one<k8s.V1ConfigMap>(objects, "ConfigMap");
const podSpec = daemonSet.spec!.template.spec!;
const container = podSpec.containers[0];
const transparentMap = parseYaml(
  readFileSync(join(DIR, "transparent", "configmap.yaml"), "utf8"),
  "transparent",
)[0] as k8s.V1ConfigMap;
const service = parseYaml(
  readFileSync(join(DEPLOY, "service", "service.yaml"), "utf8"),
  "service.yaml",
)[0] as k8s.V1Service;

const directives = (text: string, name: string): Directive[] =>
  parseCorefile(text, "Corefile").flatMap((b) => b.directives.filter((d) => d.name === name));

test("deploy/node-local/ holds real objects of their kinds, all in its kustomization", () => {
  for (const o of objects) {
    const [apiVersion, model, namespaced] = KINDS[o.kind] ?? [];
    assert.ok(model, `${o.kind} is a kind deploy/ uses`);
    assert.equal(o.apiVersion, apiVersion, o.kind);
    assert.equal(o.metadata.namespace, namespaced ? "kube-system" : undefined, `${o.kind} namespace`);
    assert.equal(o.metadata.labels?.["app.kubernetes.io/name"], "clusterdns-node-local", `${o.kind} label`);
    assert.deepEqual(schemaErrors(o, model, `${o.kind} ${o.metadata.name}`), []);
  }
  assert.deepEqual([...kustomization(BASE).resources!].sort(), files);
  assert.deepEqual(kustomization(DIR).bases, ["base"]);
  assert.deepEqual(
    kustomization(BASE).images,
    kustomization(join(DEPLOY, "base")).images,
    "the same image as deploy/",
  );
  assert.deepEqual(schemaErrors(transparentMap, "V1ConfigMap", "transparent ConfigMap"), []);
});

test("the DaemonSet is shaped for a node's DNS: hostNetwork, system-node-critical, a surge without hostPorts", () => {
  assert.equal(podSpec.hostNetwork, true);
  assert.equal(podSpec.priorityClassName, "system-node-critical");
  assert.equal(podSpec.dnsPolicy, "Default", "forward . /etc/resolv.conf is the node's resolver");
  assert.deepEqual(daemonSet.spec!.updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxSurge: "10%", maxUnavailable: 0 },
  });
  for (const c of [...podSpec.containers, ...(podSpec.initContainers ?? [])]) {
    assert.equal(
      c.ports,
      undefined,
      `${c.name}: on hostNetwork a port is a hostPort, which forbids the surge`,
    );
  }
  assert.deepEqual(podSpec.tolerations, [{ operator: "Exists" }]);
  assert.equal(daemonSet.metadata!.labels!["k8s-app"], undefined, "the kube-dns Service must not select it");
  assert.ok(container.args!.includes("-reuseport"), "the new pod shares the port with the old one");
});

test("NET_ADMIN only on the container that sets the node up, with nothing else but NET_RAW and port 53", () => {
  assert.equal(podSpec.containers.length, 1);
  assert.equal(podSpec.initContainers, undefined);
  const sc = container.securityContext!;
  assert.deepEqual(sc.capabilities, { drop: ["ALL"], add: ["NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE"] });
  assert.equal(sc.privileged, undefined);
  assert.equal(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.equal(sc.runAsUser, 0, "ip and nft run as children: only root's capabilities pass to them");
  assert.equal(podSpec.securityContext!.seccompProfile!.type, "RuntimeDefault");
  const lock = container.volumeMounts!.find((m) => m.mountPath === "/run/xtables.lock")!;
  const volume = podSpec.volumes!.find((v) => v.name === lock.name)!;
  assert.deepEqual(volume.hostPath, { path: "/run/xtables.lock", type: "FileOrCreate" });
});

for (const [name, map] of [
  ["node-local", configMap],
  ["transparent", transparentMap],
] as const) {
  test(`the ${name} Corefile sets up, and the probes, handover and grace period agree with it`, async () => {
    const text = map.data!.Corefile;
    const blocks = parseCorefile(text, `${name} Corefile`);
    await Instance.create({
      blocks,
      plugins,
      root: ROOT,
      defaultPort: 53,
      log: pino({ level: "silent" }),
      checkOnly: true,
    });
    const at = (d: string) => {
      const a = parseListenAddress(directives(text, d)[0].args[0].text);
      assert.ok(typeof a !== "string");
      return a;
    };
    for (const [probe, d] of [
      [container.livenessProbe!, "health"],
      [container.readinessProbe!, "ready"],
    ] as const) {
      assert.deepEqual([probe.httpGet!.host, probe.httpGet!.port], [at(d).host, at(d).port], d);
      assert.equal(
        at(d).host,
        LINK_LOCAL,
        `${d} on the node-local address, not on every address of the node`,
      );
    }
    const [nodelocal] = directives(text, "nodelocal");
    const handover = nodelocal.block!.find((o) => o.name === "handover")!;
    const lameduck = directives(text, "health")[0].block!.find((o) => o.name === "lameduck")!;
    const wait = parseDuration(handover.args[0], "nodelocal") + parseDuration(lameduck.args[0], "health");
    assert.ok(
      wait < podSpec.terminationGracePeriodSeconds! * 1000,
      "the kubelet's grace covers handover and lameduck",
    );
    assert.ok(!/pods verified/.test(text), "no pods watched: the ClusterRole grants none");
  });
}

test("transparent/ is node-local/ with the kube-dns Service IP bound too, and nothing else changed", () => {
  const k = kustomization(join(DIR, "transparent"));
  assert.deepEqual(k.bases, ["../base"]);
  assert.deepEqual(k.patchesStrategicMerge, ["configmap.yaml"]);
  assert.equal(transparentMap.metadata!.name, configMap.metadata!.name);
  const bind = (text: string) => directives(text, "bind")[0].args.map((t) => t.text);
  assert.deepEqual(bind(configMap.data!.Corefile), [LINK_LOCAL]);
  assert.deepEqual(bind(transparentMap.data!.Corefile), [LINK_LOCAL, service.spec!.clusterIP]);
  const rest = (text: string) => text.replace(/^ *bind .*$/m, "");
  assert.equal(rest(transparentMap.data!.Corefile), rest(configMap.data!.Corefile));
});

test("metrics: a headless Service on the port prometheus listens on, on every address, annotated for scraping", () => {
  const metrics = one<k8s.V1Service>(objects, "Service");
  assert.equal(metrics.spec!.clusterIP, "None", "headless: one endpoint per node, nothing load-balanced");
  const labels = daemonSet.spec!.template.metadata!.labels!;
  for (const [k, v] of Object.entries(metrics.spec!.selector!)) assert.equal(labels[k], v, `selector ${k}`);
  const [port] = metrics.spec!.ports!;
  assert.deepEqual([port.name, port.port, port.targetPort], ["metrics", 9253, 9253]);
  assert.deepEqual(metrics.metadata!.annotations, {
    "prometheus.io/port": String(port.port),
    "prometheus.io/scrape": "true",
  });
  assert.equal(
    daemonSet.spec!.template.metadata!.annotations?.["prometheus.io/scrape"],
    undefined,
    "no per-pod target: during a surge two pods of a node would read its one metrics port twice",
  );
  for (const map of [configMap, transparentMap]) {
    const [prometheus] = directives(map.data!.Corefile, "prometheus");
    const at = parseListenAddress(prometheus.args[0].text);
    assert.ok(typeof at !== "string");
    assert.deepEqual(
      [at.host, at.port],
      [undefined, port.port],
      "every address: Prometheus reaches the node's",
    );
  }
});

test("the node-local ClusterRole grants what deploy/'s does, for the same kubernetes block", () => {
  const role = one<k8s.V1ClusterRole>(objects, "ClusterRole");
  const central = parseYaml(
    readFileSync(join(DEPLOY, "base", "cluster-role.yaml"), "utf8"),
    "",
  )[0] as k8s.V1ClusterRole;
  assert.deepEqual(role.rules, central.rules);
  const kube = (text: string) =>
    JSON.stringify(
      directives(text, "kubernetes").map((d) =>
        [d.args, d.block].map((x) => JSON.stringify(x, ["text", "name", "args"])),
      ),
    );
  const deployMap = parseYaml(
    readFileSync(join(DEPLOY, "base", "configmap.yaml"), "utf8"),
    "",
  )[0] as k8s.V1ConfigMap;
  assert.equal(kube(configMap.data!.Corefile), kube(deployMap.data!.Corefile));
  const binding = one<k8s.V1ClusterRoleBinding>(objects, "ClusterRoleBinding");
  const account = one<k8s.V1ServiceAccount>(objects, "ServiceAccount");
  assert.equal(binding.roleRef.name, role.metadata!.name);
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: account.metadata!.name, namespace: "kube-system" },
  ]);
  assert.equal(podSpec.serviceAccountName, account.metadata!.name);
});

test("the image has the tools nodelocal runs: ip, nft and iptables", () => {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const final = text.slice(text.lastIndexOf("\nFROM "));
  const install = /^RUN apt-get update .*apt-get install -y --no-install-recommends ([^&]+)&&/m.exec(final);
  assert.ok(install, "an apt-get install in the runtime stage");
  assert.deepEqual(install[1].trim().split(/\s+/).sort(), ["iproute2", "iptables", "nftables"]);
});
