// deploy/ and the Dockerfile, checked without a cluster or a Docker daemon: every manifest holds only
// real fields of its kind (the models @kubernetes/client-node generates from Kubernetes' OpenAPI), the
// RBAC grants exactly what the shipped Corefile's kubernetes directive reads, ports and probes agree
// with the Corefile, the Service selects the Deployment's pods, and the image fits the Deployment.
// Where kubectl is installed, `kubectl kustomize deploy/` must build exactly these objects.
// (`kubectl apply --dry-run=client` cannot run here: even a client dry run asks the API server's
// discovery to map kinds to resources.)

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isIP } from "node:net";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import ts from "typescript";
import { IMAGE_ENV, NODE_FLAGS } from "../bench/processes.ts";
import { parseCorefile } from "../src/corefile/parser.ts";
import { plugins } from "../src/plugins/index.ts";
import { blockKeys } from "../src/corefile/keys.ts";
import type { Directive, ServerBlock } from "../src/corefile/types.ts";
import { kindsFor, parseConfig } from "../src/plugins/kubernetes/config.ts";
import { RESOURCE_PATHS } from "../src/plugins/kubernetes/api/reflector.ts";
import { parseListenAddress } from "../src/http/listener.ts";
import { DEFAULT_HEALTH_ADDRESS, setup as healthSetup } from "../src/plugins/health/setup.ts";
import { DEFAULT_READY_ADDRESS, setup as readySetup } from "../src/plugins/ready/setup.ts";
import { setup as errorsSetup } from "../src/plugins/errors/setup.ts";
import { HEALTH_PATH } from "../src/plugins/health/health.ts";
import { READY_PATH } from "../src/plugins/ready/ready.ts";
import type { Setup } from "../src/setup/registry.ts";
import { fakeContext } from "./helpers/setup-context.ts";
import { KINDS, parseYaml, schemaErrors, type KObject } from "./helpers/manifests.ts";

const ROOT = resolve(import.meta.dirname, "..");
const DEPLOY = join(ROOT, "deploy");
// The objects and their kustomization (deploy/kustomization.yaml builds on it, as distributions/* do).
const BASE = join(DEPLOY, "base");
const run = promisify(execFile);

// ---- the manifests, read as kubectl reads them (YAML 1.1) ----

const SERVICE = join(DEPLOY, "service");
const yamlIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== "kustomization.yaml")
    .sort();
const manifestFiles = yamlIn(BASE);
const manifests = [
  ...manifestFiles.map((f) => join(BASE, f)),
  ...yamlIn(SERVICE).map((f) => join(SERVICE, f)),
].flatMap((path) =>
  parseYaml(readFileSync(path, "utf8"), path).map((obj) => ({ file: relative(DEPLOY, path), obj })),
);

function one<T>(kind: string): T {
  const found = manifests.filter((m) => m.obj.kind === kind);
  assert.equal(found.length, 1, `one ${kind} in deploy/`);
  return found[0].obj as T;
}

const deployment = one<k8s.V1Deployment>("Deployment");
const service = one<k8s.V1Service>("Service");
const configMap = one<k8s.V1ConfigMap>("ConfigMap");
const role = one<k8s.V1ClusterRole>("ClusterRole");
const binding = one<k8s.V1ClusterRoleBinding>("ClusterRoleBinding");
const account = one<k8s.V1ServiceAccount>("ServiceAccount");
const budget = one<k8s.V1PodDisruptionBudget>("PodDisruptionBudget");
const podSpec = deployment.spec!.template.spec!;
const container = podSpec.containers[0];
const corefileText = configMap.data!.Corefile;
const corefile = parseCorefile(corefileText, "deploy/base/configmap.yaml Corefile");

test("deploy/ holds each object of the kube-dns replacement once, each made of real fields of its kind", () => {
  const kinds = ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "Service"];
  assert.deepEqual(manifests.map((m) => m.obj.kind).sort(), [...kinds, "PodDisruptionBudget"].sort());
  for (const { file, obj } of manifests) {
    const [apiVersion, model, namespaced] = KINDS[obj.kind];
    assert.equal(obj.apiVersion, apiVersion, `${file}: apiVersion of ${obj.kind}`);
    assert.match(obj.metadata?.name ?? "", /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, `${file}: metadata.name`);
    assert.equal(obj.metadata.namespace, namespaced ? "kube-system" : undefined, `${file}: namespace`);
    assert.deepEqual(schemaErrors(obj, model, file), []);
  }
});

test("the schema check rejects a misspelt field and a wrongly typed value", () => {
  const bad = structuredClone(deployment);
  Object.assign(bad.spec!.template.spec!.containers[0].securityContext!, { readOnlyRootFileSystem: true });
  Object.assign(bad.spec!, { replicas: "2" });
  assert.deepEqual(schemaErrors(bad, "V1Deployment", "d").sort(), [
    'd.spec.replicas: want a number, got "2"',
    "d.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem: not a field of V1SecurityContext",
  ]);
});

interface Kustomization extends KObject {
  resources: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
}
const kustomization = parseYaml(
  readFileSync(join(BASE, "kustomization.yaml"), "utf8"),
  "kustomization.yaml",
)[0] as Kustomization;

test("kustomization.yaml lists every manifest file once", () => {
  assert.equal(kustomization.kind, "Kustomization");
  assert.deepEqual([...kustomization.resources].sort(), manifestFiles);
});

test("kustomization.yaml names the Deployment's image, so an override needs only kubectl", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const [name, tag] = container.image!.split(":");
  assert.deepEqual(kustomization.images, [{ name, newName: name, newTag: tag }]);
  assert.equal(tag, pkg.version);
});

test("the PodDisruptionBudget lets one clusterdns pod go at a time, and only clusterdns pods", () => {
  const spec = budget.spec!;
  assert.deepEqual(spec.selector, deployment.spec!.selector, "the Deployment's selector");
  assert.equal(spec.minAvailable, undefined);
  assert.equal(spec.maxUnavailable, 1);
  assert.ok(deployment.spec!.replicas! > 1, "another pod answers while one is evicted");
  // The rollback (deploy/README.md) deletes every namespaced object that carries the clusterdns label.
  const readme = readFileSync(join(DEPLOY, "README.md"), "utf8");
  const del = /kubectl -n kube-system delete ([a-z,]+) -l app\.kubernetes\.io\/name=clusterdns/.exec(readme);
  assert.ok(del, "the rollback's delete");
  const deleted = del[1].split(",");
  for (const { obj } of manifests) {
    if (KINDS[obj.kind][2] && obj.metadata.labels?.["app.kubernetes.io/name"] === "clusterdns")
      assert.ok(deleted.includes(obj.kind.toLowerCase()), `the rollback deletes the ${obj.kind}`);
  }
});

// ---- the Corefile ----

/** A Corefile's structure without positions, to compare two Corefiles. */
const shape = (blocks: ServerBlock[]) => {
  const dirs = (ds: Directive[]): unknown =>
    ds.map((d) => ({ name: d.name, args: d.args.map((t) => t.text), block: d.block && dirs(d.block) }));
  return blocks.map((b) => ({ keys: b.keys.map((t) => t.text), directives: dirs(b.directives) }));
};

const directives = (name: string) => corefile.flatMap((b) => b.directives.filter((d) => d.name === name));

test("the ConfigMap's Corefile is kubeadm's default (Corefile.example) and every directive is known", async () => {
  const example = readFileSync(join(ROOT, "Corefile.example"), "utf8");
  assert.deepEqual(shape(corefile), shape(parseCorefile(example, "Corefile.example")));
  for (const d of corefile.flatMap((b) => b.directives)) {
    assert.ok(plugins.has(d.name), `line ${d.line}: ${d.name} is in the plugin registry`);
  }
  // Built plugins check their options; the others (forward, cache, ...) are only required to be known.
  const setups: Record<string, Setup> = { errors: errorsSetup, health: healthSetup, ready: readySetup };
  for (const b of corefile) {
    const zones = blockKeys(b).map((k) => k.zone);
    for (const d of b.directives) {
      if (d.name === "kubernetes") parseConfig(d, { zones, root: ROOT });
      else if (setups[d.name]) await setups[d.name](d, fakeContext({ zones }).ctx);
    }
  }
});

// ---- RBAC ----

/** "group/resource" of each kind the reflectors read ("" is the core group). */
function apiResource(kind: keyof typeof RESOURCE_PATHS): string {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/([^/]+)$/.exec(RESOURCE_PATHS[kind]);
  assert.ok(m, RESOURCE_PATHS[kind]);
  return `${m[1] ?? ""}/${m[2]}`;
}

/** What the kubernetes directives of a Corefile read from the API. */
function neededResources(blocks: ServerBlock[]): string[] {
  const out = new Set<string>();
  for (const b of blocks) {
    for (const d of b.directives.filter((x) => x.name === "kubernetes")) {
      const c = parseConfig(d, { zones: blockKeys(b).map((k) => k.zone), root: ROOT });
      if (c.objects) continue; // reads files, not the API
      const kinds = kindsFor(c);
      // source-api.ts reads Endpoints instead when the API does not serve EndpointSlices.
      if (kinds.includes("endpointslices")) kinds.push("endpoints");
      for (const k of kinds) out.add(apiResource(k));
    }
  }
  return [...out].sort();
}

const granted = () =>
  [
    ...new Set(role.rules!.flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.map((x) => `${g}/${x}`)))),
  ].sort();

test("the ClusterRole grants list/watch on exactly what the Corefile's kubernetes directive reads", () => {
  for (const r of role.rules!) {
    assert.deepEqual(
      r.verbs.filter((v) => !["get", "list", "watch"].includes(v)),
      [],
      "read-only verbs",
    );
    assert.ok(![...r.verbs, ...r.resources!, ...r.apiGroups!].includes("*"), "no wildcards");
    assert.equal(r.resourceNames, undefined);
    assert.equal(r.nonResourceURLs, undefined);
  }
  assert.deepEqual(granted(), neededResources(corefile));
  for (const need of neededResources(corefile)) {
    const [group, resource] = need.split("/");
    const rules = role.rules!.filter((r) => r.apiGroups!.includes(group) && r.resources!.includes(resource));
    for (const verb of ["list", "watch"])
      assert.ok(
        rules.some((r) => r.verbs.includes(verb)),
        `${need}: ${verb}`,
      );
  }
  assert.ok(!granted().includes("/pods"), "`pods insecure` reads no pods");
});

test("the derivation follows the options: pods verified needs pods, noendpoints drops endpoints", () => {
  const verified = parseCorefile(corefileText.replace("pods insecure", "pods verified"), "verified");
  assert.deepEqual(neededResources(verified), [...granted(), "/pods"].sort());
  const noEndpoints = parseCorefile(corefileText.replace("ttl 30", "ttl 30\n noendpoints"), "noendpoints");
  assert.deepEqual(neededResources(noEndpoints), ["/namespaces", "/services"]);
  // deploy/README.md's "Multi-cluster services": the one rule to add for `multicluster`.
  const mcs = parseCorefile(
    corefileText
      .replace("kubernetes cluster.local", "kubernetes cluster.local clusterset.local")
      .replace("ttl 30", "ttl 30\n multicluster clusterset.local"),
    "multicluster",
  );
  assert.deepEqual(neededResources(mcs), [...granted(), "multicluster.x-k8s.io/serviceimports"].sort());
});

test("the ClusterRoleBinding gives the role to the ServiceAccount the pods run as", () => {
  assert.deepEqual(binding.roleRef, {
    apiGroup: "rbac.authorization.k8s.io",
    kind: "ClusterRole",
    name: role.metadata!.name,
  });
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: account.metadata!.name, namespace: account.metadata!.namespace },
  ]);
  assert.equal(podSpec.serviceAccountName, account.metadata!.name);
});

// ---- Service, Deployment and Corefile agree ----

const subset = (a: Record<string, string>, b: Record<string, string>) =>
  Object.entries(a).every(([k, v]) => b[k] === v);

test("the kube-dns Service selects the Deployment's pods and reaches their ports", () => {
  const podLabels = deployment.spec!.template.metadata!.labels!;
  assert.equal(service.metadata!.name, "kube-dns");
  assert.equal(service.metadata!.labels!["k8s-app"], "kube-dns");
  assert.equal(service.metadata!.labels!["kubernetes.io/name"], "CoreDNS");
  assert.ok(subset(service.spec!.selector!, podLabels), "the Service selects the pods");
  assert.ok(subset(deployment.spec!.selector.matchLabels!, podLabels), "the Deployment selects its pods");
  assert.ok(!subset(deployment.spec!.selector.matchLabels!, { "k8s-app": "kube-dns" }), "not CoreDNS's pods");
  assert.notEqual(isIP(service.spec!.clusterIP ?? ""), 0, "a fixed clusterIP");

  const want = ["dns 53 UDP", "dns-tcp 53 TCP", "metrics 9153 TCP"];
  assert.deepEqual(
    service.spec!.ports!.map((p) => `${p.name} ${p.port} ${p.protocol}`),
    want,
  );
  for (const p of service.spec!.ports!) {
    // A number, so CoreDNS's pods (whatever they name their ports) stay reachable during the switch.
    assert.equal(typeof p.targetPort, "number", `${p.name}: targetPort`);
    const target = container.ports!.find(
      (c) => c.containerPort === p.targetPort && c.protocol === p.protocol,
    );
    assert.ok(target, `${p.name}: a container port ${p.targetPort}/${p.protocol}`);
  }
  // The rollback deletes by this label: everything but the shared Service carries it.
  for (const { obj } of manifests) {
    const label = obj.metadata.labels?.["app.kubernetes.io/name"];
    assert.equal(label, obj.kind === "Service" ? undefined : "clusterdns", `${obj.kind} label`);
  }
});

test("container ports, probes and the config volume match the Corefile", () => {
  const ports = (container.ports ?? []).map((p) => `${p.containerPort}/${p.protocol}`);
  for (const k of corefile.flatMap(blockKeys)) {
    const port = k.port ?? 53;
    assert.ok(ports.includes(`${port}/UDP`) && ports.includes(`${port}/TCP`), `${k.text}: UDP and TCP`);
  }
  const address = (name: string, fallback: string) => {
    const [d] = directives(name);
    assert.ok(d, `the Corefile has ${name}`);
    const a = parseListenAddress(d.args[0]?.text ?? fallback);
    assert.ok(typeof a !== "string", a as string);
    assert.equal(a.host, undefined, `${name} listens on the pod's IP, where the kubelet probes`);
    return a.port;
  };
  const health = container.livenessProbe!.httpGet!;
  assert.deepEqual([health.path, health.port], [HEALTH_PATH, address("health", DEFAULT_HEALTH_ADDRESS)]);
  const ready = container.readinessProbe!.httpGet!;
  assert.deepEqual([ready.path, ready.port], [READY_PATH, address("ready", DEFAULT_READY_ADDRESS)]);
  const metrics = container.ports!.find((p) => p.name === "metrics")!;
  assert.equal(metrics.containerPort, address("prometheus", ":9153"));

  assert.equal(container.args![0], "-conf");
  const mount = container.volumeMounts!.find((m) => container.args![1].startsWith(`${m.mountPath}/`))!;
  assert.ok(mount, "the Corefile path is under a volume mount");
  assert.equal(mount.subPath, undefined, "no subPath, so ConfigMap edits reach the pod for reload");
  const volume = podSpec.volumes!.find((v) => v.name === mount.name)!;
  assert.equal(volume.configMap?.name, configMap.metadata!.name);
  const file = container.args![1].slice(mount.mountPath.length + 1);
  const key = volume.configMap!.items ? volume.configMap!.items.find((i) => i.path === file)?.key : file;
  assert.equal(key, "Corefile");
});

test("the Deployment is shaped for kube-system's DNS", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  assert.equal(deployment.spec!.replicas, 2);
  assert.equal(container.image, `clusterdns:${pkg.version}`);
  assert.equal(podSpec.priorityClassName, "system-cluster-critical");
  assert.equal(podSpec.dnsPolicy, "Default");
  assert.deepEqual(podSpec.nodeSelector, { "kubernetes.io/os": "linux" });
  assert.deepEqual(
    podSpec.tolerations!.map((t) => `${t.key}:${t.operator ?? "Equal"}:${t.effect ?? ""}`),
    ["CriticalAddonsOnly:Exists:", "node-role.kubernetes.io/control-plane:Equal:NoSchedule"],
  );
  const [anti] = podSpec.affinity!.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution!;
  assert.deepEqual(anti.podAffinityTerm.labelSelector!.matchExpressions, [
    { key: "k8s-app", operator: "In", values: ["kube-dns"] },
  ]);
  assert.deepEqual(container.resources, {
    requests: { cpu: "100m", memory: "128Mi" },
    limits: { memory: "256Mi" },
  });
  const pod = podSpec.securityContext ?? {};
  const sc = container.securityContext!;
  assert.equal(sc.runAsNonRoot ?? pod.runAsNonRoot, true);
  assert.equal(sc.runAsUser ?? pod.runAsUser, 65532);
  assert.equal((sc.seccompProfile ?? pod.seccompProfile)?.type, "RuntimeDefault");
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.equal(sc.allowPrivilegeEscalation, false);
  assert.deepEqual(sc.capabilities, { drop: ["ALL"], add: ["NET_BIND_SERVICE"] });
});

test("the pods spread over zones, then nodes, without ever staying unscheduled for it", () => {
  const spread = podSpec.topologySpreadConstraints ?? [];
  assert.deepEqual(
    spread.map((c) => c.topologyKey),
    ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
  );
  for (const c of spread) {
    assert.equal(c.maxSkew, 1, c.topologyKey);
    // DoNotSchedule would leave a replica pending where nodes have no zone label or are too few.
    assert.equal(c.whenUnsatisfiable, "ScheduleAnyway", c.topologyKey);
    assert.deepEqual(c.labelSelector, deployment.spec!.selector, `${c.topologyKey}: this Deployment's pods`);
    assert.deepEqual(
      c.matchLabelKeys,
      ["pod-template-hash"],
      `${c.topologyKey}: a rollout spreads its new pods`,
    );
  }
});

// ---- deploy/README.md: what an operator follows ----

const readme = readFileSync(join(DEPLOY, "README.md"), "utf8");
/** The text of a `## ` section of deploy/README.md. */
function section(title: string): string {
  const m = new RegExp(`^## ${title}\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`, "m").exec(readme);
  assert.ok(m, `deploy/README.md has a section "${title}"`);
  return m[1];
}
/** The rows of the markdown tables in a text, cells trimmed, header and rule left out. */
const rows = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("|") && !/^\|[-| ]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    )
    .slice(1);

test("deploy/README.md starts with the image: multi-arch with buildx and podman, then kustomize edit set image", () => {
  const first = /^## (.*)$/m.exec(readme)![1];
  assert.equal(first, "Build and push the image");
  const text = section(first);
  assert.match(
    text,
    /docker buildx build --platform linux\/amd64,linux\/arm64 -t REGISTRY\/clusterdns:\S+ --push \./,
  );
  assert.match(text, /podman build --platform linux\/amd64,linux\/arm64 --manifest /);
  assert.match(text, /podman manifest push --all /);
  // The name the edit replaces is the one kustomization.yaml and the Deployment use.
  const edit = /kustomize edit set image (\S+)=REGISTRY\/clusterdns:(\S+)/.exec(text);
  assert.ok(edit, "kustomize edit set image");
  assert.equal(edit[1], kustomization.images![0].name);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  assert.equal(edit[2], pkg.version);
});

test("the upgrade and its rollback: every step says what proves it worked", () => {
  for (const title of ["Upgrade clusterdns", "Roll back an upgrade"]) {
    const steps = rows(section(title));
    assert.ok(steps.length >= 4, title);
    steps.forEach(([step, command, proof], i) => {
      assert.match(step, new RegExp(`^${i + 1}\\. `), `${title}: steps in order`);
      assert.ok(command && proof, `${title}, ${step}: a command and what shows it worked`);
    });
  }
  // Both name this Deployment and reach it through the image this kustomization sets.
  assert.match(section("Upgrade clusterdns"), /rollout status deployment\/clusterdns/);
  assert.match(section("Roll back an upgrade"), /rollout undo deployment\/clusterdns/);
  assert.equal(deployment.metadata!.name, "clusterdns");
});

/** A memory quantity in MB (10^6 bytes), as the bench reports RSS. */
function megabytes(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  assert.ok(m, `a memory quantity in Mi or Gi: ${q}`);
  return (Number(m[1]) * (m[2] === "Gi" ? 1024 : 1) * 1024 * 1024) / 1e6;
}

test("the memory request and limit follow the measured sizing table", () => {
  const text = section("Memory sizing");
  assert.match(text, /npm run bench:scale/);
  assert.match(text, /npm run bench:memory/);
  assert.match(text, /Measured with the benchmark on \d{4}-\d{2}-\d{2}/, "dated");
  const table = rows(text).map((r) => ({
    services: Number(r[0].replaceAll(",", "")),
    synced: Number(r[3]),
    peaks: [r[4], r[5], r[6]].map(Number),
    limit: r[7],
  }));
  assert.deepEqual(
    table.map((r) => r.services),
    [1000, 10000, 100000],
  );
  for (const r of table) {
    assert.ok(
      [r.synced, ...r.peaks].every((n) => Number.isFinite(n) && n > 0),
      `${r.services}: measured`,
    );
    // A limit is the highest peak of its row and a quarter more, at least.
    assert.ok(megabytes(r.limit) >= 1.25 * Math.max(...r.peaks), `${r.services}: ${r.limit} over the peaks`);
  }
  const tenK = table.find((r) => r.services === 10000)!;
  const { requests, limits } = container.resources!;
  assert.ok(megabytes(requests!.memory as string) >= tenK.synced, "the request holds a synced pod at 10k");
  assert.equal(limits!.memory, tenK.limit, "the limit is the 10k row's");
  // The manifest says where its numbers come from.
  assert.match(readFileSync(join(BASE, "deployment.yaml"), "utf8"), /"Memory sizing" in deploy\/README\.md/);
});

// ---- the image ----

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions with continuation lines joined and comments dropped; FROM starts a stage. */
function dockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let line = "";
  for (const raw of text.split("\n")) {
    if (/^\s*#/.test(raw)) continue;
    line += raw.replace(/\\\s*$/, " ");
    if (/\\\s*$/.test(raw)) continue;
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    line = "";
    if (!m) continue;
    const op = m[1].toUpperCase();
    if (op === "FROM") stage++;
    out.push({ op, args: m[2].trim().replace(/\s+/g, " "), stage });
  }
  return out;
}

test("the Dockerfile: Node 24 on slim Debian, production deps, non-root as the Deployment, no HEALTHCHECK", () => {
  const ins = dockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
  const last = Math.max(...ins.map((i) => i.stage));
  const final = ins.filter((i) => i.stage === last);
  // Base images come from ARGs before the first FROM (so a build can pin them by digest).
  const args = new Map(
    ins.filter((i) => i.op === "ARG" && i.stage === -1).map((i) => i.args.split("=") as [string, string]),
  );
  const pinned = ins
    .filter((i) => i.op === "FROM")
    .map((i) => i.args.split(" ")[0].replace(/^\$\{(\w+)\}$/, (_, name: string) => args.get(name) ?? name));
  // TAG, or TAG@sha256:DIGEST: a digest must have the tag beside it, to say which release it is.
  for (const image of pinned) assert.match(image, /^[a-z0-9./-]+:[\w.-]+(@sha256:[0-9a-f]{64})?$/, image);
  const images = pinned.map((image) => image.replace(/@sha256:.*$/, ""));
  assert.deepEqual(
    ins.filter((i) => i.op === "HEALTHCHECK"),
    [],
  );

  const codenames = new Set<string>();
  for (const image of images.slice(0, -1)) {
    const m = /^node:24-([a-z]+)-slim$/.exec(image);
    assert.ok(m, `${image}: a Node 24 slim image`);
    codenames.add(m[1]);
  }
  assert.equal(codenames.size, 1, "one Debian release");
  const [codename] = codenames;
  assert.ok([`debian:${codename}-slim`, `node:24-${codename}-slim`].includes(images.at(-1)!), images.at(-1));
  assert.ok(
    ins.some((i) => i.op === "RUN" && /\bnpm ci\b.*--omit=dev/.test(i.args)),
    "npm ci --omit=dev",
  );

  const user = final.filter((i) => i.op === "USER").at(-1)!.args;
  const pod = podSpec.securityContext!;
  assert.equal(user, `${pod.runAsUser}:${pod.runAsGroup}`, "numeric, the Deployment's uid:gid");

  const entry = JSON.parse(final.find((i) => i.op === "ENTRYPOINT")!.args) as string[];
  assert.match(entry[0], /(^|\/)node$/, "node is the first exec (keeps its file capability)");
  const workdir = final.filter((i) => i.op === "WORKDIR").at(-1)!.args;
  assert.equal(entry.at(-1), `${workdir}/bin/clusterdns`);
  for (const flag of entry.slice(1, -1)) assert.match(flag, /^--[a-z-]+(=\S+)?$/, "node flags only");
  // The benchmarks measure what ships: the same node flags and environment.
  assert.deepEqual(entry.slice(1, -1), NODE_FLAGS, "bench/processes.ts NODE_FLAGS");
  const env = Object.fromEntries(
    final
      .filter((i) => i.op === "ENV")
      .flatMap((i) => i.args.split(/\s+/))
      .map((kv) => kv.split("=")),
  ) as Record<string, string>;
  for (const [k, v] of Object.entries(IMAGE_ENV))
    assert.equal(env[k], v, `ENV ${k} (bench/processes.ts IMAGE_ENV)`);

  const copies = final
    .filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
    .flatMap((i) => i.args.split(" ").slice(0, -1))
    .sort();
  assert.deepEqual(copies, ["bin", "package.json", "zones"], "only what runs");
  for (const c of copies) assert.ok(existsSync(join(ROOT, c)), c);
  // src/ runs as its JavaScript build, made in a stage of its own with `npm run build`.
  const build = ins.find((i) => i.op === "FROM" && / AS build$/i.test(i.args))?.stage;
  assert.notEqual(build, undefined, "a build stage");
  assert.ok(ins.some((i) => i.stage === build && i.op === "RUN" && /npm run build/.test(i.args)));
  assert.ok(
    final.some((i) => i.op === "COPY" && i.args === "--from=build /app/dist ./dist"),
    "dist/ copied",
  );
  // The batched UDP engine and the TCP send-queue probe are compiled there too, and shipped: the image
  // never falls back to dgram, nor to counting only Node's part of a TCP client's unread replies.
  assert.ok(ins.some((i) => i.stage === build && i.op === "RUN" && /npm run build:native/.test(i.args)));
  for (const addon of ["clusterdns_udp", "clusterdns_tcp"]) {
    assert.ok(
      final.some(
        (i) =>
          i.op === "COPY" &&
          i.args.startsWith("--from=build ") &&
          i.args.split(" ").includes(`/app/build/Release/${addon}.node`),
      ),
      `${addon}.node copied`,
    );
  }

  if (ins.some((i) => i.op === "RUN" && /setcap cap_net_bind_service/.test(i.args))) {
    assert.ok(container.securityContext!.capabilities!.add!.includes("NET_BIND_SERVICE"), "else exec: EPERM");
  }
});

/** The files and packages a process started from `entry` can load: static and dynamic imports, as
 * TypeScript's pre-processor finds them (comments and strings are not mistaken for imports). */
function runtimeGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [entry];
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    if (files.has(f)) continue;
    files.add(f);
    for (const { fileName: spec } of ts.preProcessFile(readFileSync(f, "utf8"), true, true).importedFiles) {
      if (spec.startsWith(".")) todo.push(resolve(dirname(f), spec));
      else if (!spec.startsWith("node:")) {
        packages.add(
          spec
            .split("/")
            .slice(0, spec.startsWith("@") ? 2 : 1)
            .join("/"),
        );
      }
    }
  }
  return { files: [...files].map((f) => relative(ROOT, f)), packages: [...packages] };
}

test(".dockerignore keeps tests out and everything the server loads in", () => {
  const ignore = readFileSync(join(ROOT, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  assert.equal(ignore[0], "*", "an allowlist: everything out first");
  for (const keep of ["!package.json", "!package-lock.json", "!bin", "!src", "!zones", "**/*.test.ts"]) {
    assert.ok(ignore.includes(keep), keep);
  }

  const { files, packages } = runtimeGraph(join(ROOT, "bin", "clusterdns"));
  assert.ok(files.includes(join("src", "main.ts")));
  for (const f of files) {
    assert.match(f, /^(bin|src)\/|^package\.json$/, `${f} is copied into the image`);
    assert.doesNotMatch(f, /\.test\.ts$|\/testdata\//, `${f}: the server never loads a test file`);
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const p of packages) assert.ok(p in pkg.dependencies, `${p} is a production dependency`);

  // `npm ci --ignore-scripts` loses nothing: no production package has an install script. Ours ("",
  // the root: the native UDP engine) runs in the build stage (the Dockerfile test).
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
  };
  const scripted = Object.entries(lock.packages).filter(([k, p]) => k !== "" && !p.dev && p.hasInstallScript);
  assert.deepEqual(scripted, []);
});

// ---- kubectl, where installed ----

const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8", timeout: 20_000 });
const noKubectl = kubectl.error ? `kubectl is not installed (${kubectl.error.message})` : false;

test("kubectl kustomize builds deploy/ into exactly these objects", { skip: noKubectl }, async () => {
  const { stdout } = await run("kubectl", ["kustomize", DEPLOY], { timeout: 30_000 });
  const key = (o: KObject) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
  const built = new Map(parseYaml(stdout, "kubectl kustomize").map((o) => [key(o), o]));
  assert.deepEqual([...built.keys()].sort(), manifests.map((m) => key(m.obj)).sort());
  for (const { obj } of manifests) assert.deepEqual(built.get(key(obj)), obj, key(obj));
});

test(
  "kubectl kustomize: an image set in kustomization.yaml reaches the Deployment",
  { skip: noKubectl },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-kustomize-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(DEPLOY, dir, { recursive: true });
    const file = join(dir, "base", "kustomization.yaml");
    writeFileSync(
      file,
      readFileSync(file, "utf8")
        .replace(/^( +)newName: .*$/m, "$1newName: registry.example/team/clusterdns")
        .replace(/^( +)newTag: .*$/m, '$1newTag: "9.9.9"'),
    );
    const { stdout } = await run("kubectl", ["kustomize", dir], { timeout: 30_000 });
    const built = parseYaml(stdout, "kubectl kustomize").find(
      (o) => o.kind === "Deployment",
    ) as k8s.V1Deployment;
    assert.equal(built.spec!.template.spec!.containers[0].image, "registry.example/team/clusterdns:9.9.9");
  },
);
