// Multi-cluster services end to end: a clusterdns process with CoreDNS's `kubernetes { multicluster }`
// watches ServiceImports and imported EndpointSlices on the test API server (which serves the MCS
// CRDs' multicluster.x-k8s.io/v1alpha1 as kube-apiserver serves a custom resource), and dig asks the
// clusterset.local names; the same from an objects file; and an API without the CRDs.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { importedSlice, namespace, service, serviceImport } from "./k8s/objects.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digTransfer, digUntil as until } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";

const corefile = (source: string, readyPort: number) => `cluster.local clusterset.local {
    ready 127.0.0.1:${readyPort}
    transfer {
        to *
    }
    kubernetes cluster.local clusterset.local {
        ${source}
        multicluster clusterset.local
    }
}
`;

const A = (name: string, ip: string) => `${name}. 5 IN A ${ip}`;
const SET = "svc.clusterset.local";

const OBJECTS = [
  namespace("shop"),
  service("shop", "cart", { clusterIP: "10.96.5.5", ports: [{ name: "http", port: 80 }] }),
  serviceImport("shop", "cart", {
    ips: ["10.42.0.5"],
    ports: [{ name: "http", port: 80 }],
    clusters: ["east", "west"],
  }),
  serviceImport("shop", "db", {
    type: "Headless",
    ports: [{ name: "pg", port: 5432 }],
    clusters: ["east", "west"],
  }),
  importedSlice("shop", "db", "db-east-1", [{ ip: "10.1.0.10", hostname: "db-0" }], {
    cluster: "east",
    ports: [{ name: "pg", port: 5432 }],
  }),
  importedSlice("shop", "db", "db-west-1", [{ ip: "10.2.0.10", hostname: "db-0" }], {
    cluster: "west",
    ports: [{ name: "pg", port: 5432 }],
  }),
];

/** What both sources must answer for OBJECTS. */
async function answersTheImports(port: number): Promise<void> {
  await until(port, `cart.shop.${SET}`, "A", [A(`cart.shop.${SET}`, "10.42.0.5")]);
  await until(port, "cart.shop.svc.cluster.local", "A", [A("cart.shop.svc.cluster.local", "10.96.5.5")]);
  await until(port, `db.shop.${SET}`, "A", [
    A(`db.shop.${SET}`, "10.1.0.10"),
    A(`db.shop.${SET}`, "10.2.0.10"),
  ]);
  await until(port, `db-0.west.db.shop.${SET}`, "A", [A(`db-0.west.db.shop.${SET}`, "10.2.0.10")]);
  await until(port, `_pg._tcp.db.shop.${SET}`, "SRV", [
    `_pg._tcp.db.shop.${SET}. 5 IN SRV 0 50 5432 db-0.east.db.shop.${SET}.`,
    `_pg._tcp.db.shop.${SET}. 5 IN SRV 0 50 5432 db-0.west.db.shop.${SET}.`,
  ]);
  const srv = await dig(port, `_http._tcp.cart.shop.${SET}`, "SRV");
  assert.deepEqual(srv.answer, [`_http._tcp.cart.shop.${SET}. 5 IN SRV 0 100 80 cart.shop.${SET}.`]);
  assert.deepEqual(srv.additional, [A(`cart.shop.${SET}`, "10.42.0.5")]);
  assert.equal((await dig(port, `east.cart.shop.${SET}`, "A")).status, "NXDOMAIN");
  assert.deepEqual((await dig(port, "dns-version.clusterset.local", "TXT")).answer, [
    'dns-version.clusterset.local. 28800 IN TXT "1.0.0"',
  ]);
}

describe("multicluster from the API", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  before(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 200 });
    for (const o of OBJECTS) {
      const kind =
        o.kind === "Namespace"
          ? "namespaces"
          : o.kind === "Service"
            ? "services"
            : o.kind === "ServiceImport"
              ? "serviceimports"
              : "endpointslices";
      api.create(kind, o);
    }
    dir = mkdtempSync(join(tmpdir(), "clusterdns-mcs-"));
    srv = await startServer(corefile(`kubeconfig ${writeKubeconfig(dir, api.url)}`, await freePort()));
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers ClusterSetIP and headless imports, per-cluster names and SRV", async () => {
    await answersTheImports(srv.port);
    assert.ok(api.requestsFor("serviceimports", false).length > 0, "listed");
    assert.ok(api.requestsFor("serviceimports", true).length > 0, "watched");
  });

  it("follows the watch: an import and a cluster's slice added, changed and deleted", async () => {
    const name = `api.shop.${SET}`;
    await until(srv.port, name, "A", "NXDOMAIN");
    const imp = api.create("serviceimports", serviceImport("shop", "api", { ips: ["10.42.0.9"] }));
    await until(srv.port, name, "A", [A(name, "10.42.0.9")]);
    imp.spec!.ips = ["10.42.0.10"];
    api.update("serviceimports", imp);
    await until(srv.port, name, "A", [A(name, "10.42.0.10")]);
    api.remove("serviceimports", imp);
    await until(srv.port, name, "A", "NXDOMAIN");

    const south = api.create(
      "endpointslices",
      importedSlice("shop", "db", "db-south-1", [{ ip: "10.3.0.10", hostname: "db-0" }], {
        cluster: "south",
        ports: [{ name: "pg", port: 5432 }],
      }),
    );
    await until(srv.port, `db-0.south.db.shop.${SET}`, "A", [A(`db-0.south.db.shop.${SET}`, "10.3.0.10")]);
    await until(srv.port, `db.shop.${SET}`, "A", [
      A(`db.shop.${SET}`, "10.1.0.10"),
      A(`db.shop.${SET}`, "10.2.0.10"),
      A(`db.shop.${SET}`, "10.3.0.10"),
    ]);
    api.remove("endpointslices", south);
    await until(srv.port, `db-0.south.db.shop.${SET}`, "A", "NXDOMAIN");
  });
});

describe("multicluster from an objects file", () => {
  let srv: RunningServer;
  before(async () => {
    const file = OBJECTS.map((o) => stringify(o)).join("---\n");
    srv = await startServer(corefile("objects objects.yaml", await freePort()), {
      files: { "objects.yaml": file },
    });
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
  });

  it("answers the same", async () => {
    await answersTheImports(srv.port);
  });

  it("transfers the multicluster zone, as CoreDNS does (AXFR over TCP)", async () => {
    const x = await digTransfer(srv.port, "clusterset.local", "AXFR");
    assert.ok(!x.failed, "the transfer goes through");
    const soa = x.records[0];
    assert.match(soa, /^clusterset\.local\.\s+5\s+IN\s+SOA\s+ns\.dns\.clusterset\.local\. /);
    const norm = (l: string) => l.split(/\s+/).join(" ");
    assert.deepEqual(x.records.slice(1, -1).map(norm), [
      "clusterset.local. 5 IN NS ns.dns.clusterset.local.",
      ...x.records.filter((l) => l.startsWith("ns.dns.")).map(norm),
      A(`cart.shop.${SET}`, "10.42.0.5"),
      `cart.shop.${SET}. 5 IN SRV 0 100 80 cart.shop.${SET}.`,
      `_http._tcp.cart.shop.${SET}. 5 IN SRV 0 100 80 cart.shop.${SET}.`,
      A(`db.shop.${SET}`, "10.1.0.10"),
      A(`db-0.east.db.shop.${SET}`, "10.1.0.10"),
      `_pg._tcp.db.shop.${SET}. 5 IN SRV 0 100 5432 db-0.east.db.shop.${SET}.`,
      A(`db.shop.${SET}`, "10.2.0.10"),
      A(`db-0.west.db.shop.${SET}`, "10.2.0.10"),
      `_pg._tcp.db.shop.${SET}. 5 IN SRV 0 100 5432 db-0.west.db.shop.${SET}.`,
    ]);
    assert.equal(x.records.at(-1), soa);
  });
});

describe("multicluster on an API without the MCS CRDs", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  let readyPort: number;
  before(async () => {
    api = await startApiServer({ serviceImports: false });
    api.create("namespaces", namespace("shop"));
    api.create("services", service("shop", "cart", { clusterIP: "10.96.5.5" }));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-mcs-"));
    readyPort = await freePort();
    srv = await startServer(corefile(`kubeconfig ${writeKubeconfig(dir, api.url)}`, readyPort));
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gets ready, answers the cluster, imports nothing, and says why", async () => {
    await until(srv.port, "cart.shop.svc.cluster.local", "A", [
      A("cart.shop.svc.cluster.local", "10.96.5.5"),
    ]);
    assert.equal((await dig(srv.port, `cart.shop.${SET}`, "A")).status, "NXDOMAIN");
    let ready = await httpGet(readyPort, "/ready");
    for (let i = 0; i < 100 && ready.status !== 200; i++, await sleep(20))
      ready = await httpGet(readyPort, "/ready");
    assert.equal(ready.status, 200);
    assert.ok(
      srv.logs.some((l) =>
        String(l.msg).includes("does not serve multicluster.x-k8s.io/v1alpha1 serviceimports"),
      ),
    );
    assert.equal(api.requestsFor("serviceimports").length, 0, "no list of a resource the API does not serve");
  });
});
