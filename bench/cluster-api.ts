// The generated cluster behind the test API server (test/k8s/api-server.ts), reached through a
// kubeconfig as clusterdns reaches a real cluster, and the Corefiles the benchmarks serve it with.

import { startApiServer, type TestApiServer } from "../test/k8s/api-server.ts";
import { writeKubeconfig } from "../test/k8s/kubeconfig.ts";
import type { Kind, KObject } from "../src/plugins/kubernetes/model/source.ts";

const KINDS: Record<string, Kind> = {
  Namespace: "namespaces",
  Service: "services",
  EndpointSlice: "endpointslices",
  Endpoints: "endpoints",
  Pod: "pods",
  ServiceImport: "serviceimports",
};

export async function serveCluster(
  objects: object[],
  dir: string,
): Promise<{ api: TestApiServer; kubeconfig: string }> {
  const api = await startApiServer({ bookmarkIntervalMs: 0 });
  serveObjects(api, objects);
  return { api, kubeconfig: writeKubeconfig(dir, api.url) };
}

/** Creates the objects (each with its `kind`) in the API server. */
export function serveObjects(api: TestApiServer, objects: object[]): void {
  for (const o of objects as (KObject & { kind: string })[]) api.create(KINDS[o.kind], o);
}

/** The Corefiles a benchmark can serve the cluster with. */
export type BenchCorefile = "kubeadm" | "kubeadm-disable" | "lean";

/**
 * kubeadm's default Corefile, whole: every plugin a cluster runs, in one block, with `forward` to a
 * loopback upstream instead of /etc/resolv.conf and every HTTP listener on a free loopback port.
 * - "kubeadm": `cache 30` as kubeadm wrote it until 1.31 and as most clusters still run it (an upgrade
 *   keeps the ConfigMap): the cache sits in the same block as `kubernetes` and caches cluster answers.
 * - "kubeadm-disable": kubeadm's current default, whose cache skips the cluster domain
 *   (`disable success/denial cluster.local`).
 * - "lean": `kubernetes` alone, labelled as a trimmed Corefile wherever it is reported.
 */
export function benchCorefile(
  which: BenchCorefile,
  kubeconfig: string,
  upstreamPort: number,
  source = `kubeconfig ${kubeconfig}`,
): string {
  const kubernetes = `    kubernetes cluster.local in-addr.arpa ip6.arpa {
        ${source}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
`;
  // BENCH_INSIGHTS=1 adds the insights plugin (its listener on a port the system picks).
  const insights =
    process.env.BENCH_INSIGHTS === "1" ? "    insights {\n        listen 127.0.0.1:0\n    }\n" : "";
  // BENCH_TRACE=N adds `trace` with `every N`, its spans to BENCH_TRACE_TO (127.0.0.1:9: nobody).
  const every = process.env.BENCH_TRACE;
  const to = process.env.BENCH_TRACE_TO ?? "127.0.0.1:9";
  const trace = every !== undefined ? `    trace ${to} {\n        every ${every}\n    }\n` : "";
  if (which === "lean") return `. {\n${trace}${insights}${kubernetes}}\n`;
  const cache =
    which === "kubeadm"
      ? "    cache 30\n"
      : "    cache 30 {\n        disable success cluster.local\n        disable denial cluster.local\n    }\n";
  return `. {
    errors
    health 127.0.0.1:0 {
        lameduck 5s
    }
    ready 127.0.0.1:0
${trace}${insights}${kubernetes}    prometheus 127.0.0.1:0
    forward . 127.0.0.1:${upstreamPort} {
        max_concurrent 1000
    }
${cache}    loop
    reload
    loadbalance
}
`;
}
