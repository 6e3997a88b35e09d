// k8s_external through real sockets: a clusterdns process whose server block has k8s_external and
// kubernetes reads a cluster from the test API server, and dig asks it. It runs as if in the pod
// 10.244.0.53 (POD_IP), which the LoadBalancer service `dns` selects: that service's ingress address is
// the name servers'. Then the API changes, and the answers (also those the answer cache held) follow.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { endpointSlice, namespace, service } from "./k8s/objects.ts";
import { startFailure, startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digUntil } from "./helpers/dig.ts";

const http = [{ name: "http", port: 80 }];
const lb = (ip: string) =>
  service("default", "web", {
    type: "LoadBalancer",
    clusterIP: "10.96.0.20",
    ports: [...http, { name: "https", port: 443 }],
    ingress: [{ ip }],
  });

const corefile = (kubeconfig: string) => `example.com cluster.local 113.0.203.in-addr.arpa {
    k8s_external example.com 113.0.203.in-addr.arpa {
        headless
        ttl 10
    }
    kubernetes cluster.local {
        kubeconfig ${kubeconfig}
    }
}
`;

describe("k8s_external over dig", { concurrency: 8 }, () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  before(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 200 });
    api.create("namespaces", namespace("default"));
    api.create("namespaces", namespace("kube-system"));
    api.create("services", lb("203.0.113.10"));
    api.create(
      "services",
      service("default", "static", {
        clusterIP: "10.96.0.21",
        ports: http,
        externalIPs: ["203.0.113.21", "2001:db8::21"],
      }),
    );
    api.create(
      "services",
      service("default", "elb", {
        type: "LoadBalancer",
        ports: http,
        ingress: [{ hostname: "elb-1.example.net" }],
      }),
    );
    api.create(
      "services",
      service("default", "db", { headless: true, ports: [{ name: "mysql", port: 3306 }] }),
    );
    api.create(
      "endpointslices",
      endpointSlice("default", "db", "db-1", [{ ip: "10.244.1.1", hostname: "db-0" }], {
        ports: [{ name: "mysql", port: 3306 }],
      }),
    );
    api.create(
      "services",
      service("kube-system", "dns", { type: "LoadBalancer", ports: [53], ingress: [{ ip: "203.0.113.53" }] }),
    );
    api.create(
      "endpointslices",
      endpointSlice("kube-system", "dns", "dns-1", ["10.244.0.53"], { ports: [{ port: 53 }] }),
    );
    dir = mkdtempSync(join(tmpdir(), "clusterdns-k8s-external-"));
    srv = await startServer(corefile(writeKubeconfig(dir, api.url)), { env: { POD_IP: "10.244.0.53" } });
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const q = (name: string, type = "A") => dig(srv.port, name, type);

  it("a load balancer's ingress address, externalIPs of both families", async () => {
    assert.deepEqual((await q("web.default.example.com")).answer, [
      "web.default.example.com. 10 IN A 203.0.113.10",
    ]);
    assert.deepEqual((await q("static.default.example.com")).answer, [
      "static.default.example.com. 10 IN A 203.0.113.21",
    ]);
    assert.deepEqual((await q("static.default.example.com", "AAAA")).answer, [
      "static.default.example.com. 10 IN AAAA 2001:db8::21",
    ]);
  });

  it("SRV at the service's name (every port) and at a named port, the address additional", async () => {
    const all = await q("web.default.example.com", "SRV");
    assert.deepEqual(all.answer.sort(), [
      "web.default.example.com. 10 IN SRV 0 50 443 web.default.example.com.",
      "web.default.example.com. 10 IN SRV 0 50 80 web.default.example.com.",
    ]);
    assert.deepEqual(all.additional, ["web.default.example.com. 10 IN A 203.0.113.10"]);
    const one = await q("_https._tcp.web.default.example.com", "SRV");
    assert.deepEqual(one.answer, [
      "_https._tcp.web.default.example.com. 10 IN SRV 0 100 443 web.default.example.com.",
    ]);
  });

  it("a load balancer known by its hostname is a CNAME", async () => {
    assert.deepEqual((await q("elb.default.example.com")).answer, [
      "elb.default.example.com. 10 IN CNAME elb-1.example.net.",
    ]);
  });

  it("headless endpoints, by the service's name and the endpoint's", async () => {
    assert.deepEqual((await q("db.default.example.com")).answer, [
      "db.default.example.com. 10 IN A 10.244.1.1",
    ]);
    assert.deepEqual((await q("db-0.db.default.example.com")).answer, [
      "db-0.db.default.example.com. 10 IN A 10.244.1.1",
    ]);
  });

  it("PTR for an external address in the reverse zone it is given", async () => {
    const r = await q("10.113.0.203.in-addr.arpa", "PTR");
    assert.deepEqual(r.answer, ["10.113.0.203.in-addr.arpa. 10 IN PTR web.default.example.com."]);
    assert.ok(r.flags.includes("aa"));
  });

  it("the apex: SOA, NS ns1.dns, whose address is the ingress of the service selecting this server", async () => {
    const soa = await q("example.com", "SOA");
    assert.match(
      soa.answer[0],
      /^example\.com\. 10 IN SOA ns1\.dns\.example\.com\. hostmaster\.dns\.example\.com\. \d+ 7200 1800 86400 10$/,
    );
    const ns = await q("example.com", "NS");
    assert.deepEqual(ns.answer, ["example.com. 10 IN NS ns1.dns.example.com."]);
    assert.deepEqual(ns.additional, ["ns1.dns.example.com. 10 IN A 203.0.113.53"]);
  });

  it("names that do not exist: NXDOMAIN with the SOA; the cluster zone still answers", async () => {
    for (const name of [
      "nosuch.default.example.com",
      "web.nosuch.example.com",
      "x.web.default.example.com",
    ]) {
      const r = await q(name);
      assert.equal(r.status, "NXDOMAIN", name);
      assert.match(r.authority[0], /^example\.com\. 10 IN SOA ns1\.dns\.example\.com\. /);
    }
    assert.deepEqual((await q("web.default.svc.cluster.local")).answer, [
      "web.default.svc.cluster.local. 5 IN A 10.96.0.20",
    ]);
  });

  it(
    "a changed ingress address reaches the answers at once, cached ones included",
    { concurrency: false },
    async () => {
      // Asked twice first, so the answer cache holds the names.
      for (let i = 0; i < 2; i++) {
        await q("web.default.example.com");
        await q("web.default.example.com", "SRV");
        await q("10.113.0.203.in-addr.arpa", "PTR");
      }
      api.update("services", lb("203.0.113.11"));
      await digUntil(srv.port, "web.default.example.com", "A", [
        "web.default.example.com. 10 IN A 203.0.113.11",
      ]);
      await digUntil(srv.port, "10.113.0.203.in-addr.arpa", "PTR", "NXDOMAIN");
      await digUntil(srv.port, "11.113.0.203.in-addr.arpa", "PTR", [
        "11.113.0.203.in-addr.arpa. 10 IN PTR web.default.example.com.",
      ]);
      const srvAnswer = await q("web.default.example.com", "SRV");
      assert.deepEqual(srvAnswer.additional, ["web.default.example.com. 10 IN A 203.0.113.11"]);
    },
  );
});

describe("k8s_external start-up errors", { concurrency: true }, () => {
  it("needs the kubernetes plugin in its server block", async () => {
    const r = await startFailure("example.com {\n    k8s_external\n}\n");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Corefile:2 - .*k8s_external: needs the kubernetes plugin in this server block/);
  });

  it("an unknown option, and an apex that is not one label", async () => {
    const bad = await startFailure(
      "example.com {\n    k8s_external {\n        nope\n    }\n    kubernetes\n}\n",
    );
    assert.match(bad.stderr, /Corefile:3 - .*k8s_external: unknown property 'nope'/);
    const apex = await startFailure(
      "example.com {\n    k8s_external {\n        apex a.b\n    }\n    kubernetes\n}\n",
    );
    assert.match(apex.stderr, /Corefile:3 - .*k8s_external: apex 'a.b' is not one DNS label/);
  });
});
