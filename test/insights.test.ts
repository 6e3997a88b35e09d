// insights end to end: a clusterdns process watching Pods (with ownerReferences) from the test API
// server, asked by dig from distinct loopback addresses that the pods hold, so each query comes from
// a known pod. Search-list walks are sent step by step as a pod's resolver sends them (A and AAAA
// under each search domain, then the name as is); the JSON API, the Prometheus series and the token
// check are read over HTTP.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, pod, service } from "./k8s/objects.ts";
import { ROOT, startFailure, startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import type { Report } from "../src/plugins/insights/report.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);
const BIN = join(ROOT, "bin", "clusterdns");

const CHECKOUT = "127.0.0.21"; // shop/checkout, a Deployment's pod
const DB = "127.0.0.22"; // data/db-0, a StatefulSet's pod
const NODE = "127.0.0.23"; // a node running a hostNetwork pod
const STRANGER = "127.0.0.29"; // no pod

const ZONE = `$ORIGIN example.com.
$TTL 300
@    IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 60
@    IN NS  ns.example.com.
api  IN A   192.0.2.10
`;

/** A pod owned by `kind`/`owner` (controller: true). */
function owned(ns: string, name: string, ip: string, o: { kind: string; owner: string; labels?: object }) {
  const { kind, owner } = o;
  const p = pod(ns, name, ip, { labels: { ...o.labels } });
  Object.assign(p.metadata, {
    ownerReferences: [{ apiVersion: "apps/v1", kind, name: owner, uid: `${owner}-uid`, controller: true }],
  });
  return p;
}

/** What a pod's resolver sends for `name` (fewer than 5 dots) from namespace `ns`, up to `found`. */
function walk(name: string, ns: string): string[] {
  return [`${name}.${ns}.svc.cluster.local`, `${name}.svc.cluster.local`, `${name}.cluster.local`];
}

describe("insights", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  let port: number;
  let metricsPort: number;
  const read = async (window = "1m"): Promise<Report> => {
    const r = await httpGet(port, `/api/insights?window=${window}`);
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Report;
  };
  const ask = (from: string, name: string, type = "A") => dig(srv.port, name, type, "-b", from);

  before(async () => {
    api = await startApiServer();
    for (const ns of ["shop", "data", "default", "kube-system"]) api.create("namespaces", namespace(ns));
    api.create("services", service("default", "nginx", { clusterIP: "10.96.0.20" }));
    api.create(
      "pods",
      owned("shop", "checkout-7d4b9c6f5-x2x9q", CHECKOUT, {
        kind: "ReplicaSet",
        owner: "checkout-7d4b9c6f5",
        labels: { "pod-template-hash": "7d4b9c6f5" },
      }),
    );
    api.create("pods", owned("data", "db-0", DB, { kind: "StatefulSet", owner: "db" }));
    api.create("pods", pod("kube-system", "kube-proxy-abcde", "", { hostNetwork: true, hostIP: NODE }));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-insights-"));
    port = await freePort();
    metricsPort = await freePort();
    const kubeconfig = writeKubeconfig(dir, api.url);
    srv = await startServer(
      `. {
    prometheus 127.0.0.1:${metricsPort}
    insights {
        listen 127.0.0.1:${port}
        kubeconfig ${kubeconfig}
    }
    kubernetes cluster.local {
        kubeconfig ${kubeconfig}
    }
    file example.com.zone example.com
}
`,
      { files: { "example.com.zone": ZONE } },
    );
    for (let i = 0; i < 100; i++) {
      const r = await httpGet(port, "/api/insights");
      if (r.status === 200 && (JSON.parse(r.body) as Report).attribution.pods === 3) break;
      await sleep(50);
    }
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("attributes clients to workloads and counts a search-list walk with the name really wanted", async () => {
    // checkout asks api.example.com (2 dots): 3 search domains x A and AAAA, then the name as is.
    for (const n of walk("api.example.com", "shop")) {
      assert.equal((await ask(CHECKOUT, n, "A")).status, "NXDOMAIN");
      assert.equal((await ask(CHECKOUT, n, "AAAA")).status, "NXDOMAIN");
    }
    assert.equal((await ask(CHECKOUT, "api.example.com")).status, "NOERROR");
    assert.equal((await ask(CHECKOUT, "api.example.com", "AAAA")).status, "NOERROR");
    // db asks nginx.default: found under the second search domain after one NXDOMAIN.
    assert.equal((await ask(DB, "nginx.default.data.svc.cluster.local")).status, "NXDOMAIN");
    assert.equal((await ask(DB, "nginx.default.svc.cluster.local")).status, "NOERROR");
    await ask(NODE, "nginx.default.svc.cluster.local");
    await ask(STRANGER, "nginx.default.svc.cluster.local");
    await ask(STRANGER, "nothing.example.com");

    const r = await read();
    assert.equal(r.attribution.synced, true);
    // Its load on the API: one LIST and one WATCH of pods (the kubernetes block here watches none).
    assert.equal(api.requestsFor("pods", false).length, 1);
    assert.equal(api.requestsFor("pods", true).length, 1);
    const w = (name: string) => r.workloads.find((x) => x.workload === name);
    const checkout = w("shop/deployment/checkout");
    assert.ok(checkout, JSON.stringify(r.workloads));
    assert.equal(checkout.queries, 8);
    assert.equal(checkout.nxdomain, 6);
    assert.equal(checkout.wasted, 6);
    assert.equal(checkout.walks, 1);
    assert.deepEqual(checkout.saves, { trailingDot: 6, ndots2: 6, autopath: 6 });
    assert.match(checkout.fix, /ndots/);
    const db = w("data/statefulset/db");
    assert.ok(db);
    assert.equal(db.wasted, 1);
    assert.deepEqual(db.saves, { trailingDot: 1, ndots2: 0, autopath: 1 });
    assert.match(db.fix, /FQDN|dot/);
    assert.equal(w("(hostNetwork)")?.queries, 1);
    assert.equal(w("(unknown)")?.queries, 2);
    assert.equal(w("(unknown)")?.nxdomain, 1);
    // The table is ordered by waste.
    assert.equal(r.workloads[0].workload, "shop/deployment/checkout");
    assert.deepEqual(r.wastedNames.slice(0, 2), [
      { name: "api.example.com", workload: "shop/deployment/checkout", nxdomain: 6 },
      { name: "nginx.default", workload: "data/statefulset/db", nxdomain: 1 },
    ]);
    assert.deepEqual(
      r.topNxdomain.slice(0, 3).map((n) => n.count),
      [2, 2, 2],
    );
    assert.ok(r.topNxdomain.some((n) => n.name === "api.example.com.shop.svc.cluster.local"));
    // A name asked once is not a top name (the lists admit a name on its second sighting).
    assert.ok(!r.topNxdomain.some((n) => n.name === "nginx.default.data.svc.cluster.local"));
    assert.ok(r.topNames.some((n) => n.name === "nginx.default.svc.cluster.local" && n.count === 3));
    const client = r.topClients.find((c) => c.address === CHECKOUT);
    assert.deepEqual(client, { address: CHECKOUT, workload: "shop/deployment/checkout", count: 8, error: 0 });
    assert.equal(r.totals.queries, 13);
    assert.equal(r.totals.wasted, 7);
    assert.deepEqual(
      r.namespaces.map((n) => [n.namespace, n.queries, n.wasted]),
      [
        ["shop", 8, 6],
        ["data", 2, 1],
      ],
    );
  });

  it("shows the same in a terminal: clusterdns top --once", async () => {
    const { stdout } = await run(process.execPath, [BIN, "top", "--server", `127.0.0.1:${port}`, "--once"], {
      env: { ...process.env, COLUMNS: "200" },
    });
    assert.match(stdout, /^clusterdns insights @ 127\.0\.0\.1:\d+ +window 1m/);
    assert.match(stdout, /shop\/deployment\/checkout +8 +6 +6 +dnsConfig ndots/);
    assert.match(stdout, /api\.example\.com cost 6 NXDOMAIN from shop\/deployment\/checkout/);
    assert.match(stdout, new RegExp(`${CHECKOUT.replaceAll(".", "\\.")} +shop/deployment/checkout`));
  });

  it("the page, in headless chromium, shows the traffic sent", async () => {
    // --dump-dom prints the DOM once the page's script has run (virtual time lets its fetch finish).
    const { stdout } = await run(
      "chromium",
      [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        `--user-data-dir=${join(dir, "chromium")}`,
        "--virtual-time-budget=5000",
        "--dump-dom",
        `http://127.0.0.1:${port}/`,
      ],
      { timeout: 60_000, maxBuffer: 8 * 1024 * 1024 },
    );
    const text = (id: string) => {
      const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(stdout);
      return m?.[1];
    };
    assert.equal(text("status"), "live", stdout.slice(0, 2000));
    assert.equal(text("wasted"), "53.8%"); // 7 of 13 queries
    assert.equal(text("nx"), "61.5%"); // 8 of 13
    const table = /<table id="workloads">.*?<\/table>/s.exec(stdout)?.[0] ?? "";
    const firstRow = /<tbody><tr[^>]*>(.*?)<\/tr>/s.exec(table)?.[1] ?? "";
    const cells = [...firstRow.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
    assert.deepEqual(cells.slice(0, 5), ["shop/deployment/checkout", "8", "6", "6", "0"]);
    assert.match(cells[5], /ndots/);
    assert.match(stdout, /<li>api\.example\.com cost 6 NXDOMAIN from shop\/deployment\/checkout<\/li>/);
    assert.match(stdout, /<li>nginx\.default cost 1 NXDOMAIN from data\/statefulset\/db<\/li>/);
    // The lists say which window they cover (the page's choice, 1m at first).
    assert.match(stdout, /<h2>Top names <span class="window">\(last 1m\)<\/span><\/h2>/);
  });

  it("exports per-namespace series and the top workloads to Prometheus", async () => {
    const m = (await httpGet(metricsPort, "/metrics")).body;
    assert.match(m, /clusterdns_insights_queries_total\{namespace="shop"\} 8/);
    assert.match(m, /clusterdns_insights_search_wasted_total\{namespace="shop"\} 6/);
    assert.match(m, /clusterdns_insights_queries_total\{namespace="\(unknown\)"\} 2/);
    assert.match(
      m,
      /clusterdns_insights_workload_queries_total\{namespace="shop",workload="checkout",kind="Deployment"\} 8/,
    );
  });

  it("follows a pod that is deleted: its address becomes unknown", async () => {
    api.remove("pods", { name: "db-0", namespace: "data" });
    for (let i = 0; i < 100 && (await read()).attribution.pods !== 2; i++) await sleep(50);
    await ask(DB, "nginx.default.svc.cluster.local");
    const r = await read();
    assert.equal(r.workloads.find((x) => x.workload === "(unknown)")?.queries, 3);
  });

  it("serves the page and refuses an unknown window", async () => {
    const page = await httpGet(port, "/");
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>clusterdns insights<\/title>/);
    assert.doesNotMatch(page.body, /https?:\/\//, "nothing loaded from elsewhere");
    assert.equal((await httpGet(port, "/insights.js")).status, 200);
    assert.equal((await httpGet(port, "/api/insights?window=2d")).status, 400);
  });
});

describe("insights listener safety", () => {
  it("refuses a non-loopback listener without a token, with the line", async () => {
    const r = await startFailure(". {\n    insights {\n        listen :9155\n    }\n    whoami\n}\n");
    assert.notEqual(r.code, 0);
    assert.match(r.stderr + r.stdout, /Corefile:3.*needs 'token FILE'/);
  });

  it("with a token, the API wants it and the page does not", async () => {
    const port = await freePort();
    const token = "s3cret-token-of-some-length";
    const srv = await startServer(
      `. {\n    insights {\n        listen 127.0.0.1:${port}\n        token token.txt\n    }\n    whoami\n}\n`,
      { files: { "token.txt": `${token}\n` } },
    );
    try {
      assert.equal((await httpGet(port, "/api/insights")).status, 401);
      const res = await fetch(`http://127.0.0.1:${port}/api/insights`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200);
      const wrong = await fetch(`http://127.0.0.1:${port}/api/insights`, {
        headers: { Authorization: `Bearer ${token.slice(0, -1)}x` },
      });
      assert.equal(wrong.status, 401);
      assert.equal((await httpGet(port, "/")).status, 200);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });
});
