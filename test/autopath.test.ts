// autopath @kubernetes end to end: a clusterdns process watching the test API server (pods verified)
// walks the search path of the pod a query comes from. dig sends from a chosen loopback address
// (-b), which the test gives to a pod, so the server sees a pod's address as on a real node.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, pod, service } from "./k8s/objects.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { setTimeout as sleep } from "node:timers/promises";

const POD = "127.0.0.5"; // a pod in "default"
const OTHER = "127.0.0.7"; // a pod in "team-a"
const NODE = "127.0.0.6"; // a host-network pod's (the node's) address
const STRANGER = "127.0.0.9"; // no pod
const CUSTOM = "127.0.0.8"; // a pod in "default" with dnsConfig searches of its own
const NONE = "127.0.0.10"; // a pod in "default" with dnsPolicy None
const NDOTS = "127.0.0.11"; // a pod in "default" with dnsConfig options only

const ZONE = `$ORIGIN example.com.
$TTL 300
@    IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 60
@    IN NS  ns.example.com.
ns   IN A   192.0.2.1
api  IN A   192.0.2.10
api.example.com IN A 192.0.2.99
`;

describe("autopath @kubernetes", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  let metricsPort: number;
  before(async () => {
    api = await startApiServer();
    for (const ns of ["default", "team-a", "kube-system"]) api.create("namespaces", namespace(ns));
    api.create("services", service("default", "nginx", { clusterIP: "10.96.0.20" }));
    api.create("services", service("team-a", "nginx", { clusterIP: "10.96.1.20" }));
    api.create("pods", pod("default", "client", POD));
    api.create("pods", pod("team-a", "client", OTHER));
    api.create("pods", pod("kube-system", "kube-proxy", "", { hostNetwork: true, hostIP: NODE }));
    const withDns = (name: string, ip: string, spec: object) => {
      const p = pod("default", name, ip);
      return { ...p, spec: { ...p.spec, ...spec } };
    };
    api.create("pods", withDns("custom", CUSTOM, { dnsConfig: { searches: ["example.com"] } }));
    const none = { nameservers: ["10.96.0.10"], searches: ["default.svc.cluster.local", "example.com"] };
    api.create("pods", withDns("none", NONE, { dnsPolicy: "None", dnsConfig: none }));
    api.create("pods", withDns("ndots", NDOTS, { dnsConfig: { options: [{ name: "ndots", value: "2" }] } }));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-autopath-"));
    metricsPort = await freePort();
    const readyPort = await freePort();
    srv = await startServer(
      `. {
    prometheus 127.0.0.1:${metricsPort}
    ready 127.0.0.1:${readyPort}
    kubernetes cluster.local k8s.example {
        kubeconfig ${writeKubeconfig(dir, api.url)}
        pods verified
    }
    autopath @kubernetes
    file example.com.zone example.com
}
`,
      { files: { "example.com.zone": ZONE } },
    );
    // Once synced every pod is known by address (a query before that is answered as without autopath).
    for (let i = 0; i < 100 && (await httpGet(readyPort, "/ready")).status !== 200; i++) await sleep(50);
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = (from: string, name: string, type = "A") => dig(srv.port, name, type, "-b", from);

  it("answers a pod's first search-list expansion of an outside name with a CNAME and its address", async () => {
    const r = await ask(POD, "api.example.com.default.svc.cluster.local");
    assert.equal(r.status, "NOERROR");
    assert.deepEqual(r.answer, [
      "api.example.com.default.svc.cluster.local. 300 IN CNAME api.example.com.",
      "api.example.com. 300 IN A 192.0.2.10",
    ]);
  });

  it("walks to a cluster name in the pod's own search order", async () => {
    const r = await ask(POD, "nginx.team-a.default.svc.cluster.local");
    assert.deepEqual(r.answer, [
      "nginx.team-a.default.svc.cluster.local. 5 IN CNAME nginx.team-a.svc.cluster.local.",
      "nginx.team-a.svc.cluster.local. 5 IN A 10.96.1.20",
    ]);
    // The same short name from a pod in team-a finds its own namespace's service first.
    const own = await ask(OTHER, "nginx.team-a.svc.cluster.local");
    assert.deepEqual(own.answer, ["nginx.team-a.svc.cluster.local. 5 IN A 10.96.1.20"]);
  });

  it("answers a name that exists as asked with no CNAME", async () => {
    const r = await ask(POD, "nginx.default.svc.cluster.local");
    assert.deepEqual(r.answer, ["nginx.default.svc.cluster.local. 5 IN A 10.96.0.20"]);
  });

  it("answers every other client as if autopath were not there, and never from another's walk", async () => {
    const name = "api.example.com.default.svc.cluster.local";
    for (let round = 0; round < 2; round++) {
      for (const from of [STRANGER, NODE, OTHER]) {
        assert.equal((await ask(from, name)).status, "NXDOMAIN", `from ${from}`);
      }
      // Between the NXDOMAINs, the pod still gets its walk: no shared cache served it either way.
      assert.equal((await ask(POD, name)).answer.length, 2);
    }
  });

  it("answers NXDOMAIN for the asked name when nothing on the path exists", async () => {
    const r = await ask(POD, "nothing.example.com.default.svc.cluster.local", "AAAA");
    assert.equal(r.status, "NXDOMAIN");
    assert.deepEqual(r.answer, []);
  });

  it("counts its answers for Prometheus", async () => {
    const body = (await httpGet(metricsPort, "/metrics")).body;
    const value = (series: string) => {
      const line = body.split("\n").find((l) => l.startsWith(series + " "));
      assert.ok(line, `${series} in /metrics`);
      return Number(line.split(" ")[1]);
    };
    const server = `server="dns://:${srv.port}"`;
    assert.equal(value(`coredns_autopath_success_total{${server}}`), 4);
    assert.equal(value(`clusterdns_autopath_answers_total{${server},result="unknown_client"}`), 4);
    assert.equal(value(`clusterdns_autopath_answers_total{${server},result="nxdomain"}`), 1);
    // From the pods: every name asked was below one of their search domains; the AAAA of a name
    // that exists nowhere ended NXDOMAIN, and so did team-a's pod asking default's expansion.
    assert.equal(value(`clusterdns_search_expansions_total{${server},result="nxdomain"}`), 3);
    assert.equal(value(`clusterdns_search_expansions_total{${server},result="answered"}`), 6);
  });

  it("walks the path of the block's cluster zone the query is in, not only the first one's", async () => {
    // A pod whose kubelet says clusterDomain k8s.example (a cluster domain being renamed) searches
    // default.svc.k8s.example svc.k8s.example k8s.example.
    const r = await ask(POD, "api.example.com.default.svc.k8s.example");
    assert.deepEqual(r.answer, [
      "api.example.com.default.svc.k8s.example. 300 IN CNAME api.example.com.",
      "api.example.com. 300 IN A 192.0.2.10",
    ]);
    const svc = await ask(POD, "nginx.team-a.default.svc.k8s.example");
    assert.deepEqual(svc.answer, [
      "nginx.team-a.default.svc.k8s.example. 5 IN CNAME nginx.team-a.svc.k8s.example.",
      "nginx.team-a.svc.k8s.example. 5 IN A 10.96.1.20",
    ]);
  });

  it("answers pods with search domains of their own (dnsConfig, dnsPolicy None) as without it", async () => {
    // Their resolv.conf is not <ns>.svc.<zone> svc.<zone> <zone> and the node's domains: a walk made
    // from the namespace skips theirs. Both search example.com after default.svc.cluster.local, so
    // glibc, asking api.example.com, ends at api.example.com.example.com, never at api.example.com.
    for (const from of [CUSTOM, NONE]) {
      const r = await ask(from, "api.example.com.default.svc.cluster.local");
      assert.equal(r.status, "NXDOMAIN", `from ${from}: ${r.answer.join(", ")}`);
    }
    // dnsConfig options alone (ndots) leave the search list as it is: the walk stays.
    assert.equal((await ask(NDOTS, "api.example.com.default.svc.cluster.local")).answer.length, 2);
  });
});

describe("autopath RESOLV-CONF", () => {
  it("takes a search domain '.' (systemd-resolved's 'search .') for the name as is, never as the first domain", async () => {
    // glibc queries a name as is for '.', then x.example.com.example.com for example.com. Read as the
    // first search domain, '.' made every NXDOMAIN a walk from a name cut short by a label's last
    // octet: x.example.com became x.example.co, answered with x.example.co.example.com.
    const srv = await startServer(
      `example.com {
    autopath resolv.conf
    file example.com.zone
}
`,
      {
        files: {
          "resolv.conf": "nameserver 127.0.0.53\nsearch . example.com\n",
          "example.com.zone": `${ZONE}x.example.co IN A 192.0.2.50\nx.example.com IN A 192.0.2.51\n`,
        },
      },
    );
    try {
      const asIs = await dig(srv.port, "x.example.com", "A");
      assert.equal(asIs.status, "NXDOMAIN", asIs.answer.join(", "));
      const expanded = await dig(srv.port, "x.example.com.example.com", "A");
      assert.deepEqual(expanded.answer, ["x.example.com.example.com. 300 IN A 192.0.2.51"]);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });
});
