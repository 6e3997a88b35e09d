// Kubernetes manifests as the tests read them: YAML 1.1 as kubectl reads it, and a strict schema check
// against the models @kubernetes/client-node generates from Kubernetes' OpenAPI (what
// `kubectl apply --validate=strict` would reject), without a cluster.

import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import * as k8s from "@kubernetes/client-node";

export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

/** kind -> [apiVersion, client-node model, namespaced], for the kinds deploy/ uses. */
export const KINDS: Record<string, [string, string, boolean]> = {
  ServiceAccount: ["v1", "V1ServiceAccount", true],
  ClusterRole: ["rbac.authorization.k8s.io/v1", "V1ClusterRole", false],
  ClusterRoleBinding: ["rbac.authorization.k8s.io/v1", "V1ClusterRoleBinding", false],
  Role: ["rbac.authorization.k8s.io/v1", "V1Role", true],
  RoleBinding: ["rbac.authorization.k8s.io/v1", "V1RoleBinding", true],
  ConfigMap: ["v1", "V1ConfigMap", true],
  Deployment: ["apps/v1", "V1Deployment", true],
  DaemonSet: ["apps/v1", "V1DaemonSet", true],
  Service: ["v1", "V1Service", true],
  PodDisruptionBudget: ["policy/v1", "V1PodDisruptionBudget", true],
};

export function parseYaml(text: string, where: string): KObject[] {
  return parseAllDocuments(text, { version: "1.1" })
    .map((doc) => {
      assert.deepEqual(doc.errors, [], `${where}: ${doc.errors.join("; ")}`);
      return doc.toJS() as KObject | null;
    })
    .filter((o): o is KObject => o !== null);
}

interface Model {
  getAttributeTypeMap(): { baseName: string; type: string }[];
}
const models = k8s as unknown as Record<string, Model | undefined>;
const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Fields that are not in the model, and values of the wrong JSON type, as "path: problem". */
export function schemaErrors(value: unknown, type: string, path: string): string[] {
  const list = /^Array<(.+)>$/.exec(type);
  if (list) {
    if (!Array.isArray(value)) return [`${path}: want a list`];
    return value.flatMap((v, i) => schemaErrors(v, list[1], `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (!isMap(value)) return [`${path}: want a map`];
    return Object.entries(value).flatMap(([k, v]) => schemaErrors(v, map[1], `${path}.${k}`));
  }
  const want = (ok: boolean, what: string) =>
    ok ? [] : [`${path}: want ${what}, got ${JSON.stringify(value)}`];
  switch (type) {
    case "any":
      return [];
    case "string":
    case "Date":
      return want(typeof value === "string", "a string");
    case "number":
      return want(typeof value === "number", "a number");
    case "boolean":
      return want(typeof value === "boolean", "a boolean");
    case "IntOrString":
      return want(typeof value === "string" || typeof value === "number", "an int or a string");
  }
  const model = models[type];
  if (typeof model?.getAttributeTypeMap !== "function") return [`${path}: no API model ${type}`];
  if (!isMap(value)) return [`${path}: want an object (${type})`];
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([k, v]) => {
    const t = fields.get(k);
    return t === undefined ? [`${path}.${k}: not a field of ${type}`] : schemaErrors(v, t, `${path}.${k}`);
  });
}
