// insights with -workers 2: a real clusterdns process answers with two threads (SO_REUSEPORT spreads
// dig's changing source ports over both), pods at known loopback addresses come from the test API
// server, and every address sends a known number of queries. The JSON API and the Prometheus series
// must count all of them, whichever thread answered; a Corefile reload (SIGUSR1) that keeps
// `insights` keeps the counts, in both threads.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, pod } from "./k8s/objects.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";
import type { Report } from "../src/plugins/insights/report.ts";

/** Client address -> the workload the API server's pods make it (or "(unknown)"). */
const CLIENTS: Record<string, string> = {
  "127.0.0.41": "shop/deployment/checkout",
  "127.0.0.42": "shop/deployment/cart",
  "127.0.0.43": "data/statefulset/db",
  "127.0.0.49": "(unknown)",
};
/** Queries per client address, sent at once (a dig each, a new source port each). */
const EACH = 24;

const zone = (address: string) => `$ORIGIN example.com.
$TTL 300
@    IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 60
@    IN NS  ns.example.com.
api  IN A   ${address}
`;

/** A pod at `ip` owned by kind/owner (a ReplicaSet's pods carry its pod-template-hash). */
function owned(ns: string, name: string, ip: string, o: { kind: string; owner: string; hash?: string }) {
  const p = pod(ns, name, ip, { labels: o.hash === undefined ? {} : { "pod-template-hash": o.hash } });
  Object.assign(p.metadata, {
    ownerReferences: [
      { apiVersion: "apps/v1", kind: o.kind, name: o.owner, uid: `${o.owner}-uid`, controller: true },
    ],
  });
  return p;
}

describe("insights with -workers 2", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  const ports = { insights: 0, metrics: 0 };
  let corefile: (zoneFile: string) => string;
  const read = async (): Promise<Report> => {
    const r = await httpGet(ports.insights, "/api/insights?window=1m");
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Report;
  };
  /** Reads until the total is `want` (the workers post every second), or fails with the last. */
  const readTotal = async (want: number): Promise<Report> => {
    let r = await read();
    for (let i = 0; i < 100 && r.totals.queries < want; i++) {
      await sleep(100);
      r = await read();
    }
    assert.equal(r.totals.queries, want, JSON.stringify(r.workloads));
    return r;
  };
  const perThread = async () => {
    const text = (await httpGet(ports.metrics, "/metrics")).body;
    return [0, 1].map((w) => sample(text, "clusterdns_worker_queries_total", { worker: String(w) }) ?? 0);
  };
  /** `each` queries from every client address, 12 digs at a time (a retry would count twice, so
   * each dig asks once; more at once time out on a loaded machine). */
  const traffic = async (each: number) => {
    for (const from of Object.keys(CLIENTS)) {
      for (let sent = 0; sent < each; sent += 12) {
        const n = Math.min(12, each - sent);
        await Promise.all(
          Array.from({ length: n }, async () => {
            assert.equal((await dig(srv.port, "api.example.com", "A", "-b", from)).status, "NOERROR");
          }),
        );
      }
    }
  };

  before(async () => {
    api = await startApiServer();
    for (const ns of ["shop", "data"]) api.create("namespaces", namespace(ns));
    api.create(
      "pods",
      owned("shop", "checkout-7d4b9-a", "127.0.0.41", {
        kind: "ReplicaSet",
        owner: "checkout-7d4b9",
        hash: "7d4b9",
      }),
    );
    api.create(
      "pods",
      owned("shop", "cart-5f6d7-b", "127.0.0.42", { kind: "ReplicaSet", owner: "cart-5f6d7", hash: "5f6d7" }),
    );
    api.create("pods", owned("data", "db-0", "127.0.0.43", { kind: "StatefulSet", owner: "db" }));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-insights-workers-"));
    ports.insights = await freePort();
    ports.metrics = await freePort();
    const kubeconfig = writeKubeconfig(dir, api.url);
    corefile = (zoneFile) => `. {
    prometheus 127.0.0.1:${ports.metrics}
    insights {
        listen 127.0.0.1:${ports.insights}
        kubeconfig ${kubeconfig}
    }
    file ${zoneFile} example.com
}
`;
    srv = await startServer(corefile("one.zone"), {
      args: ["-workers", "2"],
      files: { "one.zone": zone("192.0.2.1"), "two.zone": zone("192.0.2.2") },
    });
    for (let i = 0; i < 100; i++) {
      const r = await httpGet(ports.insights, "/api/insights");
      if (r.status === 200 && (JSON.parse(r.body) as Report).attribution.pods === 3) break;
      await sleep(50);
    }
    // The workers' copies of the pod addresses come from the main thread once they say hello.
    await sleep(1500);
  });
  after(async () => {
    await srv?.stop("SIGKILL");
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts every thread's queries: totals, workloads, top clients and Prometheus", async () => {
    const threadsBefore = await perThread();
    await traffic(EACH);
    const threadsAfter = await perThread();
    const answered = threadsAfter.map((n, i) => n - threadsBefore[i]);
    assert.equal(answered[0] + answered[1], 4 * EACH);
    assert.ok(answered[0] > 0 && answered[1] > 0, `both threads answered: ${answered.join(", ")}`);

    const r = await readTotal(4 * EACH);
    for (const [address, workload] of Object.entries(CLIENTS)) {
      const w = r.workloads.find((x) => x.workload === workload);
      assert.equal(w?.queries, EACH, `${workload}: ${JSON.stringify(w)}`);
      assert.equal(w.noerror, EACH);
      const c = r.topClients.find((x) => x.address === address);
      assert.deepEqual([c?.count, c?.error, c?.workload], [EACH, 0, workload], JSON.stringify(r.topClients));
    }
    assert.deepEqual(r.topNames[0], { name: "api.example.com", count: 4 * EACH, error: 0 });

    const text = (await httpGet(ports.metrics, "/metrics")).body;
    for (const ns of ["shop", "data", "(unknown)"]) {
      const want = ns === "shop" ? 2 * EACH : EACH;
      assert.equal(sample(text, "clusterdns_insights_queries_total", { namespace: ns }), want, ns);
    }
  });

  it("keeps the counts across a reload (SIGUSR1) that keeps insights, in every thread", async () => {
    const before = (await read()).totals.queries;
    const reloads = () => srv.logs.filter((l) => l.msg === "reloaded").length;
    const seen = reloads();
    writeFileSync(join(srv.dir, "Corefile"), corefile("two.zone"));
    srv.proc.kill("SIGUSR1");
    // The main thread's and each worker's "reloaded", and the new zone served.
    for (let i = 0; i < 200 && reloads() < seen + 2; i++) await sleep(50);
    assert.equal(reloads(), seen + 2, "the main thread and the worker reloaded");
    assert.deepEqual((await dig(srv.port, "api.example.com")).answer, [
      "api.example.com. 300 IN A 192.0.2.2",
    ]);
    assert.ok((await read()).totals.queries >= before, "nothing counted was lost");
    const afterReload = (await readTotal(before + 1)).totals.queries;
    await traffic(EACH / 2);
    const r = await readTotal(afterReload + 2 * EACH);
    const checkout = r.workloads.find((x) => x.workload === CLIENTS["127.0.0.41"]);
    assert.equal(checkout?.queries, EACH + EACH / 2, JSON.stringify(r.workloads));
  });
});
