// The kubernetes plugin against a live API: a real clusterdns process watches the test API server
// through a kubeconfig, and every change made to the API must show up in what dig gets - services
// added, changed and deleted, headless services scaled, endpoints flipping readiness, watches dropped,
// a 410 Gone forcing a relist, the API restored from an etcd backup (lower resourceVersions), the API
// failing before the first sync and going away after it.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { endpointSlice, namespace, service } from "./k8s/objects.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digUntil as until } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";

const corefile = (kubeconfig: string, readyPort: number, extra = "", metricsPort?: number) => `cluster.local {
    ready 127.0.0.1:${readyPort}
    ${metricsPort === undefined ? "" : `prometheus 127.0.0.1:${metricsPort}`}
    kubernetes {
        kubeconfig ${kubeconfig}
        ${extra}
    }
}
`;

const a = (name: string, ip: string) => `${name}. 5 IN A ${ip}`;

describe("a live watch", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  let metricsPort: number;
  before(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 200 });
    api.create("namespaces", namespace("default"));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-watch-"));
    metricsPort = await freePort();
    srv = await startServer(corefile(writeKubeconfig(dir, api.url), await freePort(), "", metricsPort));
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a service and its slice: added, changed, deleted", async () => {
    const name = "web.default.svc.cluster.local";
    await until(srv.port, name, "A", "NXDOMAIN");
    const svc = api.create(
      "services",
      service("default", "web", { clusterIP: "10.96.7.1", ports: [{ name: "http", port: 80 }] }),
    );
    const slice = api.create(
      "endpointslices",
      endpointSlice("default", "web", "web-1", ["10.1.0.1"], { ports: [{ name: "http", port: 80 }] }),
    );
    await until(srv.port, name, "A", [a(name, "10.96.7.1")]);
    await until(srv.port, `_http._tcp.${name}`, "SRV", [`_http._tcp.${name}. 5 IN SRV 0 100 80 ${name}.`]);
    await until(srv.port, `10-1-0-1.${name}`, "A", [a(`10-1-0-1.${name}`, "10.1.0.1")]);

    svc.spec.clusterIP = "10.96.7.2";
    svc.spec.clusterIPs = ["10.96.7.2"];
    svc.spec.ports = [{ name: "api", port: 8080, protocol: "TCP", targetPort: 8080 }];
    api.update("services", svc);
    await until(srv.port, name, "A", [a(name, "10.96.7.2")]);
    await until(srv.port, `_api._tcp.${name}`, "SRV", [`_api._tcp.${name}. 5 IN SRV 0 100 8080 ${name}.`]);
    await until(srv.port, `_http._tcp.${name}`, "SRV", "NXDOMAIN");

    api.remove("endpointslices", slice);
    api.remove("services", svc);
    await until(srv.port, name, "A", "NXDOMAIN");
    const gone = await dig(srv.port, name, "A");
    assert.match(gone.authority[0] ?? "", /^cluster\.local\. 5 IN SOA /);
    await until(srv.port, `10-1-0-1.${name}`, "A", "NXDOMAIN");
  });

  it("a headless service scales up and down, over two slices, and endpoints flip readiness", async () => {
    const name = "db.default.svc.cluster.local";
    const ports = [{ name: "pg", port: 5432 }];
    const svc = api.create("services", service("default", "db", { headless: true, ports }));
    const s1 = api.create(
      "endpointslices",
      endpointSlice("default", "db", "db-1", [{ ip: "10.2.0.1", hostname: "db-0" }], { ports }),
    );
    await until(srv.port, name, "A", [a(name, "10.2.0.1")]);
    await until(srv.port, `db-0.${name}`, "A", [a(`db-0.${name}`, "10.2.0.1")]);

    const eps = [
      { ip: "10.2.0.1", hostname: "db-0" },
      { ip: "10.2.0.2", hostname: "db-1" },
    ];
    s1.endpoints = endpointSlice("default", "db", "db-1", eps, { ports }).endpoints;
    api.update("endpointslices", s1);
    const s2 = api.create(
      "endpointslices",
      endpointSlice("default", "db", "db-2", [{ ip: "10.2.0.3", hostname: "db-2" }], { ports }),
    );
    await until(srv.port, name, "A", [a(name, "10.2.0.1"), a(name, "10.2.0.2"), a(name, "10.2.0.3")]);

    // db-1 not ready: gone from the set and from its own name.
    s1.endpoints = endpointSlice("default", "db", "db-1", [eps[0], { ...eps[1], ready: false }], {
      ports,
    }).endpoints;
    api.update("endpointslices", s1);
    await until(srv.port, name, "A", [a(name, "10.2.0.1"), a(name, "10.2.0.3")]);
    await until(srv.port, `db-1.${name}`, "A", "NXDOMAIN");
    // publishNotReadyAddresses brings it back.
    svc.spec.publishNotReadyAddresses = true;
    api.update("services", svc);
    await until(srv.port, name, "A", [a(name, "10.2.0.1"), a(name, "10.2.0.2"), a(name, "10.2.0.3")]);

    // Scale down to one replica.
    api.remove("endpointslices", s2);
    s1.endpoints = endpointSlice("default", "db", "db-1", [eps[0]], { ports }).endpoints;
    api.update("endpointslices", s1);
    await until(srv.port, name, "A", [a(name, "10.2.0.1")]);
    await until(srv.port, `db-2.${name}`, "A", "NXDOMAIN");
  });

  it("an endpoint change is observed as DNS programming latency, by service kind, as CoreDNS does", async () => {
    const metric = "coredns_kubernetes_dns_programming_duration_seconds";
    const kind = { service_kind: "headless_with_selector" };
    const clusterIp = { service_kind: "cluster_ip" };
    const scrape = async () => (await httpGet(metricsPort, "/metrics")).body;
    const count = async (k = kind) => sample(await scrape(), `${metric}_count`, k) ?? 0;
    const before = await count();
    const beforeClusterIp = await count(clusterIp);
    // The endpoints controller stamps when the change it writes happened: here 2 s before the write.
    const trigger = {
      "endpoints.kubernetes.io/last-change-trigger-time": new Date(Date.now() - 2000).toISOString(),
    };
    api.create("services", service("default", "lat", { headless: true }));
    api.create("services", service("default", "lat-ip", { clusterIP: "10.96.7.9" }));
    api.create(
      "endpointslices",
      endpointSlice("default", "lat-ip", "lat-ip-1", ["10.1.9.2"], { ports: [], annotations: trigger }),
    );
    api.create(
      "endpointslices",
      endpointSlice("default", "lat", "lat-1", ["10.1.9.1"], { ports: [], annotations: trigger }),
    );
    await until(srv.port, "lat.default.svc.cluster.local", "A", [
      a("lat.default.svc.cluster.local", "10.1.9.1"),
    ]);
    await until(srv.port, "10-1-9-2.lat-ip.default.svc.cluster.local", "A", [
      a("10-1-9-2.lat-ip.default.svc.cluster.local", "10.1.9.2"),
    ]);
    const text = await scrape();
    assert.equal(sample(text, `${metric}_count`, kind), before + 1, "the headless service's slice");
    assert.ok((sample(text, `${metric}_sum`, kind) ?? 0) >= 2, "at least the 2 s since the trigger");
    assert.equal(sample(text, `${metric}_bucket`, { ...kind, le: "1.024" }), 0);
    // CoreDNS 1.14.3 and later count a cluster IP service's endpoints too, as cluster_ip.
    assert.equal(sample(text, `${metric}_count`, clusterIp), beforeClusterIp + 1, "the cluster IP service's");
  });

  it("dropped watches are re-established; after a 410 Gone the relist catches up", async () => {
    const name = "cache.default.svc.cluster.local";
    const svc = api.create("services", service("default", "cache", { clusterIP: "10.96.8.1" }));
    await until(srv.port, name, "A", [a(name, "10.96.8.1")]);

    api.dropWatches();
    svc.spec.clusterIP = "10.96.8.2";
    svc.spec.clusterIPs = ["10.96.8.2"];
    api.update("services", svc);
    await until(srv.port, name, "A", [a(name, "10.96.8.2")]);

    // History compacted: a re-watch from the old resourceVersion gets 410 Gone and must relist. The
    // changes made meanwhile (one service changed, one added, one deleted) are all seen.
    const lists = api.requestsFor("services", false).length;
    const other = api.create("services", service("default", "other", { clusterIP: "10.96.8.9" }));
    await until(srv.port, "other.default.svc.cluster.local", "A", [
      a("other.default.svc.cluster.local", "10.96.8.9"),
    ]);
    // All in one tick: the reflector cannot re-watch before the history is gone.
    api.dropWatches();
    svc.spec.clusterIP = "10.96.8.3";
    svc.spec.clusterIPs = ["10.96.8.3"];
    api.update("services", svc);
    api.remove("services", other);
    api.create("services", service("default", "late", { clusterIP: "10.96.8.4" }));
    api.compact();
    await until(srv.port, name, "A", [a(name, "10.96.8.3")]);
    await until(srv.port, "other.default.svc.cluster.local", "A", "NXDOMAIN");
    await until(srv.port, "late.default.svc.cluster.local", "A", [
      a("late.default.svc.cluster.local", "10.96.8.4"),
    ]);
    assert.ok(api.requestsFor("services", false).length > lists, "the services were listed again");
  });

  // An ExternalName naming a cluster Service: its answer carries the target's records, so a change of
  // the target must show at once, as a change of the Service itself does. The TTL of 30 s outlasts
  // digUntil's 10 s: an answer kept by its TTL fails. Once through `cache` (keepttl: the TTLs dig
  // compares stay whole) on one thread, once without it on two (a worker's own answer store).
  const chasing = [
    { title: "through cache, one thread", tag: "c", cache: "cache 30 {\n        keepttl\n    }", args: [] },
    { title: "without cache, -workers 2", tag: "w", cache: "", args: ["-workers", "2"] },
  ];
  for (const s of chasing) {
    it(`an ExternalName to a cluster Service follows its target's changes: ${s.title}`, async () => {
      const conf = `cluster.local {
    ${s.cache}
    kubernetes {
        kubeconfig ${writeKubeconfig(dir, api.url)}
        ttl 30
    }
}
`;
      const chaser = await startServer(conf, { args: s.args });
      try {
        await followsTarget(api, chaser, s.tag);
        await followsHeadlessTarget(api, chaser, s.tag);
      } finally {
        assert.equal(await chaser.stop(), 0);
      }
    });
  }
});

describe("an API restored from an etcd backup", () => {
  it("its watches from a resourceVersion it has not reached (504 Too large) give way to a LIST", async () => {
    const api = await startApiServer({ bookmarkIntervalMs: 200 });
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "kubernetes", { clusterIP: "10.96.0.1" }));
    const backup = api.resourceVersion();
    for (let i = 0; i < 5; i++)
      api.create("services", service("default", `old${i}`, { clusterIP: `10.96.8.${i + 1}` }));
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-watch-"));
    const metricsPort = await freePort();
    const srv = await startServer(corefile(writeKubeconfig(dir, api.url), await freePort(), "", metricsPort));
    try {
      const old = "old0.default.svc.cluster.local";
      await until(srv.port, old, "A", [a(old, "10.96.8.1")]);
      const restored = performance.now();
      api.restore(backup);
      api.create("services", service("default", "n1", { clusterIP: "10.96.9.1" }));
      // Each watch waits the API's 3 s for its 504, then a backoff and the LIST.
      const n1 = "n1.default.svc.cluster.local";
      await until(srv.port, n1, "A", [a(n1, "10.96.9.1")]);
      await until(srv.port, old, "A", "NXDOMAIN");
      assert.ok(performance.now() - restored < 7000, "converged within seconds of the API's 3 s wait");
      const metrics = (await httpGet(metricsPort, "/metrics")).body;
      assert.ok((sample(metrics, "clusterdns_kubernetes_relists", { kind: "services" }) ?? 0) >= 1);
      const connected = async () =>
        sample((await httpGet(metricsPort, "/metrics")).body, "clusterdns_kubernetes_api_connected");
      for (let i = 0; i < 100 && (await connected()) !== 1; i++) await sleep(50);
      assert.equal(await connected(), 1);
    } finally {
      assert.equal(await srv.stop(), 0);
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("before the first sync and after the API is gone", () => {
  it("/ready is 503 and cluster names SERVFAIL until synced; then the last state outlives the API", async () => {
    const api = await startApiServer();
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "web", { clusterIP: "10.96.9.1" }));
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-watch-"));
    const readyPort = await freePort();
    // The first requests fail: each reflector's backoff (from 250 ms, doubling, half of it jitter)
    // runs a few times, so the first sync comes well after startup_timeout.
    api.failNext(12, 500);
    const srv = await startServer(
      corefile(writeKubeconfig(dir, api.url), readyPort, "startup_timeout 300ms"),
    );
    try {
      const name = "web.default.svc.cluster.local";
      const early = await dig(srv.port, name, "A");
      const ready = await httpGet(readyPort, "/ready");
      assert.equal(early.status, "SERVFAIL", "not synced after startup_timeout: SERVFAIL");
      assert.equal(ready.status, 503);
      await until(srv.port, name, "A", [a(name, "10.96.9.1")]);
      for (let i = 0; i < 100 && (await httpGet(readyPort, "/ready")).status !== 200; i++) await sleep(50);
      assert.equal((await httpGet(readyPort, "/ready")).status, 200);

      // The API goes away: the last known state keeps answering, and the loss is logged.
      const logsBefore = srv.logs.length;
      await api.close();
      await sleep(500);
      await until(srv.port, name, "A", [a(name, "10.96.9.1")]);
      await until(srv.port, "nothere.default.svc.cluster.local", "A", "NXDOMAIN");
      const lost = () =>
        srv.logs.slice(logsBefore).some((l) => l.level === "warn" && l.plugin === "kubernetes");
      for (let i = 0; i < 100 && !lost(); i++) await sleep(50);
      assert.ok(lost(), "the lost API is logged");
    } finally {
      assert.equal(await srv.stop(), 0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const cname = (name: string, target: string) => `${name}. 30 IN CNAME ${target}.`;
const a30 = (name: string, ip: string) => `${name}. 30 IN A ${ip}`;

/** An ExternalName whose target has a cluster IP: re-created with another, deleted, created again. */
async function followsTarget(api: TestApiServer, srv: RunningServer, tag: string): Promise<void> {
  const tgt = `tgt-${tag}.default.svc.cluster.local`;
  const alias = `alias-${tag}.default.svc.cluster.local`;
  const ask = (want: string[]) => until(srv.port, alias, "A", [cname(alias, tgt), ...want]);
  api.create("services", service("default", `tgt-${tag}`, { clusterIP: "10.96.110.1" }));
  api.create("services", service("default", `alias-${tag}`, { externalName: tgt }));
  await ask([a30(tgt, "10.96.110.1")]);
  await askedOnEveryThread(srv, alias);

  api.remove("services", { namespace: "default", name: `tgt-${tag}` });
  api.create("services", service("default", `tgt-${tag}`, { clusterIP: "10.96.110.2" }));
  await ask([a30(tgt, "10.96.110.2")]);
  await askedOnEveryThread(srv, alias);

  api.remove("services", { namespace: "default", name: `tgt-${tag}` });
  await ask([]);
  await askedOnEveryThread(srv, alias);

  api.create("services", service("default", `tgt-${tag}`, { clusterIP: "10.96.110.3" }));
  await ask([a30(tgt, "10.96.110.3")]);
}

/** An ExternalName whose target is headless, and its endpoints change. */
async function followsHeadlessTarget(api: TestApiServer, srv: RunningServer, tag: string): Promise<void> {
  const tgt = `htgt-${tag}.default.svc.cluster.local`;
  const alias = `halias-${tag}.default.svc.cluster.local`;
  const ask = (ip: string) => until(srv.port, alias, "A", [cname(alias, tgt), a30(tgt, ip)]);
  api.create("services", service("default", `htgt-${tag}`, { headless: true }));
  const slice = api.create(
    "endpointslices",
    endpointSlice("default", `htgt-${tag}`, `htgt-${tag}-1`, ["10.244.110.1"], { ports: [] }),
  );
  api.create("services", service("default", `halias-${tag}`, { externalName: tgt }));
  await ask("10.244.110.1");
  await askedOnEveryThread(srv, alias);

  slice.endpoints = endpointSlice("default", `htgt-${tag}`, `htgt-${tag}-1`, ["10.244.110.2"]).endpoints;
  api.update("endpointslices", slice);
  await ask("10.244.110.2");
}

/** Asks a few more times, so that each thread's answer store has had the chance to keep the answer. */
async function askedOnEveryThread(srv: RunningServer, name: string): Promise<void> {
  for (let i = 0; i < 4; i++) await dig(srv.port, name, "A");
}
