// Writes a real kubeconfig file (clusters, users, contexts, current-context) pointing at a test API
// server, so the code under test loads it exactly as it would load an operator's kubeconfig.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";

export interface KubeconfigOptions {
  /** Bearer token of the user (no auth when absent). */
  token?: string;
  /** Name of the context (and of its cluster and user); default "test". */
  context?: string;
  /** Default namespace of the context. */
  namespace?: string;
  /** CA file for an https server; an http server is written with insecure-skip-tls-verify. */
  caFile?: string;
  /** Client certificate and key files. */
  certFile?: string;
  keyFile?: string;
  /** More contexts to write beside the current one, each pointing at its own server URL. */
  extraContexts?: { name: string; server: string }[];
  /** File name inside dir; default "kubeconfig". */
  fileName?: string;
}

/** Writes the kubeconfig into `dir` and returns its path. */
export function writeKubeconfig(dir: string, serverUrl: string, o: KubeconfigOptions = {}): string {
  const name = o.context ?? "test";
  const cluster = (server: string): Record<string, unknown> => {
    const c: Record<string, unknown> = { server };
    if (server.startsWith("http:")) c["insecure-skip-tls-verify"] = true;
    if (o.caFile && server.startsWith("https:")) c["certificate-authority"] = o.caFile;
    return c;
  };
  const user: Record<string, unknown> = {};
  if (o.token !== undefined) user.token = o.token;
  if (o.certFile !== undefined) user["client-certificate"] = o.certFile;
  if (o.keyFile !== undefined) user["client-key"] = o.keyFile;
  const context: Record<string, unknown> = { cluster: name, user: name };
  if (o.namespace !== undefined) context.namespace = o.namespace;

  const extra = o.extraContexts ?? [];
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name, cluster: cluster(serverUrl) },
      ...extra.map((e) => ({ name: e.name, cluster: cluster(e.server) })),
    ],
    users: [{ name, user }, ...extra.map((e) => ({ name: e.name, user }))],
    contexts: [
      { name, context },
      ...extra.map((e) => ({ name: e.name, context: { cluster: e.name, user: e.name } })),
    ],
    "current-context": name,
    preferences: {},
  };
  const path = join(dir, o.fileName ?? "kubeconfig");
  writeFileSync(path, stringify(doc), { mode: 0o600 });
  return path;
}
