// deploy/autoscaler/, the optional cluster-proportional-autoscaler, checked without a cluster: real
// fields of each kind, a target that is deploy/'s Deployment, CoreDNS's linear parameters, and RBAC
// that allows scaling that one Deployment and reading its own ConfigMap, nothing more. Where kubectl
// is installed, `kubectl kustomize deploy/autoscaler/` builds exactly these objects.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type * as k8s from "@kubernetes/client-node";
import { KINDS, parseYaml, schemaErrors, type KObject } from "./helpers/manifests.ts";
import { ROOT } from "./helpers/server.ts";

const DEPLOY = join(ROOT, "deploy");
const DIR = join(DEPLOY, "autoscaler");
const run = promisify(execFile);

const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
  .sort();
const objects = files.flatMap((f) => parseYaml(readFileSync(join(DIR, f), "utf8"), f));
const of = <T>(kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];
const one = <T>(kind: string): T => {
  const found = of<T>(kind);
  assert.equal(found.length, 1, `one ${kind} in deploy/autoscaler/`);
  return found[0];
};

const target = parseYaml(
  readFileSync(join(DEPLOY, "base", "deployment.yaml"), "utf8"),
  "deployment.yaml",
)[0] as k8s.V1Deployment;
const autoscaler = one<k8s.V1Deployment>("Deployment");
const config = one<k8s.V1ConfigMap>("ConfigMap");
const account = one<k8s.V1ServiceAccount>("ServiceAccount");
const container = autoscaler.spec!.template.spec!.containers[0];
/** --name=value flags of the autoscaler's command. */
const flags = new Map(
  container.command!.slice(1).map((a) => {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    assert.ok(m, `a --flag=value: ${a}`);
    return [m[1], m[2]];
  }),
);

test("deploy/autoscaler/ holds real objects of their kinds, all in its kustomization", () => {
  for (const o of objects) {
    const [apiVersion, model, namespaced] = KINDS[o.kind] ?? [];
    assert.ok(model, `${o.kind} is a kind deploy/ uses`);
    assert.equal(o.apiVersion, apiVersion, o.kind);
    assert.equal(o.metadata.namespace, namespaced ? "kube-system" : undefined, `${o.kind} namespace`);
    assert.equal(o.metadata.labels?.["app.kubernetes.io/name"], "clusterdns-autoscaler", `${o.kind} label`);
    assert.deepEqual(schemaErrors(o, model, `${o.kind} ${o.metadata.name}`), []);
  }
  const kustomization = parseYaml(
    readFileSync(join(DIR, "kustomization.yaml"), "utf8"),
    "kustomization",
  )[0] as KObject & {
    resources: string[];
  };
  assert.deepEqual([...kustomization.resources].sort(), files);
});

test("it scales deploy/'s Deployment with CoreDNS's linear parameters, read from its ConfigMap", () => {
  assert.match(container.image!, /^registry\.k8s\.io\/cpa\/cluster-proportional-autoscaler:v\d+\.\d+\.\d+$/);
  assert.equal(container.command![0], "/cluster-proportional-autoscaler");
  assert.equal(flags.get("target"), `deployment/${target.metadata!.name}`);
  assert.equal(flags.get("namespace"), target.metadata!.namespace);
  assert.equal(flags.get("configmap"), config.metadata!.name);
  assert.equal(flags.has("default-params"), false, "the ConfigMap is shipped, so it never creates one");
  assert.deepEqual(JSON.parse(config.data!.linear), {
    coresPerReplica: 256,
    nodesPerReplica: 16,
    preventSinglePointFailure: true,
    includeUnschedulableNodes: true,
  });
  assert.equal(autoscaler.spec!.template.spec!.serviceAccountName, account.metadata!.name);
});

test("its RBAC: count nodes, scale that one Deployment, read its own ConfigMap; nothing else", () => {
  const rules = (r: { rules?: k8s.V1PolicyRule[] }) =>
    (r.rules ?? []).map(
      (x) =>
        `${x.apiGroups!.join(",")} ${x.resources!.join(",")} ${(x.resourceNames ?? []).join(",")} ${x.verbs.join(",")}`,
    );
  assert.deepEqual(rules(one<k8s.V1ClusterRole>("ClusterRole")), [" nodes  list,watch"]);
  assert.deepEqual(rules(one<k8s.V1Role>("Role")), [
    `apps deployments/scale ${target.metadata!.name} get,update`,
    ` configmaps ${config.metadata!.name} get`,
  ]);
  const subject = [{ kind: "ServiceAccount", name: account.metadata!.name, namespace: "kube-system" }];
  for (const kind of ["ClusterRoleBinding", "RoleBinding"]) {
    const b = one<k8s.V1RoleBinding>(kind);
    assert.deepEqual(b.subjects, subject, kind);
    assert.equal(b.roleRef.kind, kind.replace("Binding", ""), kind);
    assert.equal(b.roleRef.name, one<KObject>(b.roleRef.kind).metadata.name, kind);
  }
});

test("the autoscaler runs as the restricted Pod Security profile asks", () => {
  const pod = autoscaler.spec!.template.spec!.securityContext!;
  const sc = container.securityContext!;
  assert.equal(pod.runAsNonRoot, true);
  assert.equal(pod.seccompProfile?.type, "RuntimeDefault");
  assert.equal(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.deepEqual(sc.capabilities, { drop: ["ALL"] });
});

test("the rollback to CoreDNS removes the autoscaler first (it would scale clusterdns back up)", () => {
  const readme = readFileSync(join(DEPLOY, "README.md"), "utf8");
  const rollback = /^## Roll back to CoreDNS\n([\s\S]*?)^## /m.exec(readme)![1];
  const lines = rollback.split("\n");
  const removed = lines.findIndex((l) => l.startsWith("kubectl delete -k deploy/autoscaler/"));
  const deleted = lines.findIndex((l) =>
    /delete deployment,.* -l app\.kubernetes\.io\/name=clusterdns/.test(l),
  );
  assert.ok(
    removed >= 0 && removed < deleted,
    "kubectl delete -k deploy/autoscaler/ before the Deployment goes",
  );
});

const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8", timeout: 20_000 });
const noKubectl = kubectl.error ? `kubectl is not installed (${kubectl.error.message})` : false;

test(
  "kubectl kustomize builds deploy/autoscaler/ into exactly these objects",
  { skip: noKubectl },
  async () => {
    const { stdout } = await run("kubectl", ["kustomize", DIR], { timeout: 30_000 });
    const key = (o: KObject) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    const built = new Map(parseYaml(stdout, "kubectl kustomize").map((o) => [key(o), o]));
    assert.deepEqual([...built.keys()].sort(), objects.map(key).sort());
    for (const o of objects) assert.deepEqual(built.get(key(o)), o, key(o));
  },
);
