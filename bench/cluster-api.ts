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

/** The Corefile clusterdns runs in the benchmark: the kubernetes plugin as kubeadm configures it. */
export const benchCorefile = (kubeconfig: string) => `cluster.local {
    kubernetes cluster.local {
        kubeconfig ${kubeconfig}
        pods insecure
    }
}
`;
