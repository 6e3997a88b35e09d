// The generated cluster behind the test API server (test/k8s/api-server.ts), reached through a
// kubeconfig as clusterdns reaches a real cluster.

import { startApiServer, type TestApiServer } from "../test/k8s/api-server.ts";
import { writeKubeconfig } from "../test/k8s/kubeconfig.ts";
import type { Kind, KObject } from "../src/plugins/kubernetes/source.ts";

const KINDS: Record<string, Kind> = {
  Namespace: "namespaces",
  Service: "services",
  EndpointSlice: "endpointslices",
  Endpoints: "endpoints",
  Pod: "pods",
};

export async function serveCluster(
  objects: object[],
  dir: string,
): Promise<{ api: TestApiServer; kubeconfig: string }> {
  const api = await startApiServer({ bookmarkIntervalMs: 0 });
  for (const o of objects as (KObject & { kind: string })[]) api.create(KINDS[o.kind], o);
  return { api, kubeconfig: writeKubeconfig(dir, api.url) };
}

/** The benchmarks' Corefile: kubeadm's default for the cluster zone, so the hot path and the memory
 * figures pay what they pay in a cluster (metrics on every query, loadbalance's shuffled replies).
 * Left out: forward, loop and cache, which only act on names outside the zone and would send traffic
 * off the machine, and health, ready and reload, which no query goes through. */
export const kubeadmBenchCorefile = (kubeconfig: string) => `cluster.local {
    errors
    kubernetes cluster.local {
        kubeconfig ${kubeconfig}
        pods insecure
        ttl 30
    }
    prometheus 127.0.0.1:0
    loadbalance
}
`;
