// The kubernetes plugin's client-side limits on API requests (apiserver_qps, apiserver_burst,
// apiserver_max_inflight), seen from the test API server: what arrives there, and when. Each check is
// a lower bound the limits guarantee (a slow machine only spreads requests out further), and each
// fails without the limit; the exact timing is rate-limit.test.ts's, on a clock of its own.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { endpointSlice, namespace, pod, service } from "./k8s/objects.ts";
import { startServer } from "./helpers/server.ts";
import { digUntil } from "./helpers/dig.ts";

const corefile = (kubeconfig: string, options: string[]) => `cluster.local {
    kubernetes {
        kubeconfig ${kubeconfig}
        pods verified
${options.map((o) => `        ${o}\n`).join("")}    }
}
`;

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "clusterdns-limits-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** An API server with a small cluster; `latencyMs` delays every answer but a watch's. */
async function cluster(latencyMs = 0): Promise<TestApiServer> {
  const api = await startApiServer({ latencyMs });
  api.create("namespaces", namespace("default"));
  api.create("services", service("default", "web", { clusterIP: "10.96.0.20", ports: [80] }));
  api.create(
    "endpointslices",
    endpointSlice("default", "web", "web-1", ["10.244.1.1"], { ports: [{ port: 80 }] }),
  );
  api.create("pods", pod("default", "web-1", "10.244.1.1"));
  return api;
}

let servers = 0;

/** Starts clusterdns on `api` with these kubernetes options, waits until it answers from the API, and
 * stops it. */
async function runAgainst(api: TestApiServer, options: string[]): Promise<void> {
  const kubeconfig = writeKubeconfig(dir, api.url, { fileName: `kubeconfig-${servers++}` });
  // With apiserver_qps 2 the start alone takes discovery's and the LISTs' spacing (5 s and more); a
  // loaded machine adds its own seconds to that.
  const srv = await startServer(corefile(kubeconfig, options), { timeoutMs: 60_000 });
  try {
    const name = "web.default.svc.cluster.local";
    await digUntil(srv.port, name, "A", [`${name}. 5 IN A 10.96.0.20`]);
    // Pods are listed too.
    await digUntil(srv.port, "10-244-1-1.default.pod.cluster.local", "A", [
      "10-244-1-1.default.pod.cluster.local. 5 IN A 10.244.1.1",
    ]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
}

describe("apiserver limits against the test API server", { concurrency: true }, () => {
  it("apiserver_qps and apiserver_burst: n requests arrive over (n - burst) / qps seconds", async () => {
    const api = await cluster();
    try {
      const qps = 2;
      const burst = 1;
      await runAgainst(api, [`apiserver_qps ${qps}`, `apiserver_burst ${burst}`]);
      const arrivals = api.requests.map((r) => r.at).sort((a, b) => a - b);
      // Discovery and a LIST of each of four kinds at least (the watches may not have started yet).
      assert.ok(arrivals.length >= 5, `${arrivals.length} requests`);
      // The bucket spaces the requests' starts (n requests span (n - burst) / qps at least); the way to
      // the server adds a delay to each, which on a busy machine differs between them by hundreds of
      // ms: a second of the span is left for that. Without the limit they arrive together.
      const span = arrivals.at(-1)! - arrivals[0];
      const least = ((arrivals.length - burst) / qps) * 1000 - 1000;
      assert.ok(span >= least, `${arrivals.length} requests within ${span.toFixed(0)} ms, want ${least} ms`);
    } finally {
      await api.close();
    }
  });

  it("apiserver_max_inflight: no more LISTs and discovery requests open at once than allowed", async () => {
    const [limited, free] = await Promise.all([cluster(200), cluster(200)]);
    try {
      await Promise.all([runAgainst(limited, ["apiserver_max_inflight 1"]), runAgainst(free, [])]);
      assert.equal(limited.maxInFlight(), 1);
      // The same start-up without the option opens its first requests together.
      assert.ok(free.maxInFlight() > 1, `without the limit: ${free.maxInFlight()}`);
    } finally {
      await Promise.all([limited.close(), free.close()]);
    }
  });
});
