import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kind, KObject } from "../model/source.ts";
import { Store } from "./store.ts";
import { normalIP } from "./slim.ts";
import { dashed } from "./packed.ts";
import { parseLabelSelector } from "../model/label-selector.ts";
import { endpointSlice, endpoints, namespace, pod, service } from "../../../../test/k8s/objects.ts";
import { ALL, ZONES, names, synced, web, webSlice } from "../../../../test/k8s/store-fixtures.ts";

describe("store: sync and lists", () => {
  it("is synced once the first list of every kind it waits for is done", () => {
    const store = new Store({ zones: ZONES, waitFor: ["services", "endpointslices"] });
    assert.equal(store.synced, false);
    store.listStart("services");
    store.listDone("services");
    assert.equal(store.synced, false);
    let resolved = false;
    void store.whenSynced().then(() => (resolved = true));
    store.listStart("endpointslices");
    assert.equal(store.synced, false, "a list in progress is not done");
    store.listDone("endpointslices");
    assert.equal(store.synced, true);
    return Promise.resolve().then(() => assert.equal(resolved, true));
  });

  it("takes a list of Endpoints for EndpointSlices (the API's fallback on old clusters)", () => {
    const store = new Store({ zones: ZONES, waitFor: ["services", "endpointslices"] });
    store.listStart("services");
    store.listDone("services");
    store.listStart("endpoints");
    store.listDone("endpoints");
    assert.equal(store.synced, true);
  });

  it("reports nothing before the sync, then one full invalidation at it", () => {
    const changes: unknown[] = [];
    const store = new Store({ zones: ZONES, waitFor: ["services"], onChange: (n) => void changes.push(n) });
    store.apply("services", "ADDED", web());
    assert.deepEqual(changes, []);
    store.listStart("services");
    store.apply("services", "ADDED", web());
    store.listDone("services");
    assert.deepEqual(changes, ["all"]);
  });

  it("a relist deletes what it did not deliver, and reports the change once, at its end", () => {
    const a = service("default", "a", { clusterIP: "10.96.0.1" });
    const b = service("default", "b", { clusterIP: "10.96.0.2" });
    const { store, changes } = synced([
      ["services", a],
      ["services", b],
    ]);
    store.listStart("services");
    store.apply("services", "ADDED", a);
    assert.equal(changes.length, 0, "nothing is reported in the middle of a list");
    assert.ok(store.service("default", "b"), "b lives until the list is done");
    store.listDone("services");
    assert.equal(store.service("default", "b"), undefined);
    assert.ok(store.service("default", "a"));
    assert.equal(changes.length, 1);
    const n = names(changes[0]);
    assert.ok(n.includes("b.default.svc.cluster.local."));
    assert.ok(n.includes("2.0.96.10.in-addr.arpa."));
    assert.ok(!n.includes("a.default.svc.cluster.local."), "an unchanged service is not named");
  });

  it("a watch event of another kind during a relist is reported at once", () => {
    const { store, changes } = synced([["services", web()]]);
    store.listStart("services");
    store.apply("services", "ADDED", service("default", "new", { clusterIP: "10.96.0.77" }));
    store.apply("endpointslices", "ADDED", webSlice("10.244.1.5"));
    assert.equal(changes.length, 1);
    assert.ok(names(changes[0]).includes("10-244-1-5.web.default.svc.cluster.local."));
    store.listDone("services");
    assert.equal(changes.length, 2);
    assert.ok(names(changes[1]).includes("web.default.svc.cluster.local."), "web was not relisted: gone");
  });

  it("a relist of identical objects changes nothing", () => {
    const objs: [Kind, KObject][] = [
      ["services", web()],
      ["endpointslices", webSlice("10.244.1.5")],
    ];
    const { store, changes } = synced(objs);
    const modified = store.modified;
    for (const kind of ALL) {
      store.listStart(kind);
      for (const [k, o] of objs) if (k === kind) store.apply(kind, "MODIFIED", structuredClone(o));
      store.listDone(kind);
    }
    assert.deepEqual(changes, []);
    assert.equal(store.modified, modified);
  });

  it("counts objects per kind and estimates their bytes", () => {
    const { store } = synced([
      ["services", web()],
      ["endpointslices", webSlice("10.244.1.5", "10.244.1.6")],
      ["namespaces", namespace("default")],
      ["endpoints", endpoints("default", "web", [{ addresses: ["10.244.1.5"] }])],
    ]);
    const s1 = store.stats();
    assert.deepEqual(s1.objects, {
      services: 1,
      endpointslices: 1,
      endpoints: 0,
      namespaces: 1,
      pods: 0,
      serviceimports: 0,
    });
    assert.equal(s1.addresses, 3, "the cluster IP and two endpoint addresses");
    store.apply("services", "ADDED", service("default", "other", { clusterIP: "10.96.0.99" }));
    const s2 = store.stats();
    assert.equal(s2.objects.services, 2);
    assert.ok(s1.bytes > 0 && s2.bytes > s1.bytes, `${s1.bytes} < ${s2.bytes}`);
  });
});

describe("store: slim records", () => {
  it("keeps what DNS needs of a service, addresses canonical", () => {
    const { store } = synced([
      [
        "services",
        service("default", "dual", {
          clusterIPs: ["10.96.0.7", "FD00:0:0:0:0:0:0:7"],
          ports: [{ name: "DNS", port: 53, protocol: "UDP" }],
        }),
      ],
      ["services", service("default", "hl", { headless: true })],
      ["services", service("default", "ext", { externalName: "WWW.Example.ORG" })],
    ]);
    const dual = store.service("default", "dual")!;
    assert.deepEqual(dual.clusterIPs, ["10.96.0.7", "fd00::7"]);
    assert.deepEqual(dual.ports, [{ name: "dns", proto: "udp", port: 53 }]);
    assert.equal(dual.headless, false);
    assert.equal(store.service("default", "hl")!.headless, true);
    assert.deepEqual(store.service("default", "hl")!.clusterIPs, []);
    assert.equal(store.service("default", "ext")!.externalName, "www.example.org.");
  });

  it("merges a service's slices, keeping ready endpoints (all with publishNotReadyAddresses)", () => {
    const slices = [
      endpointSlice("default", "web", "web-1", ["10.244.1.1", { ip: "10.244.1.2", ready: false }]),
      endpointSlice("default", "web", "web-2", [
        { ip: "10.244.2.1", terminating: true },
        { ip: "fd00::2:1" },
      ]),
    ];
    const { store } = synced([
      ["services", web()],
      ...slices.map((s): [Kind, KObject] => ["endpointslices", s]),
    ]);
    const ips = (svc = store.service("default", "web")!) =>
      store.endpoints(svc).flatMap((g) => g.endpoints.map((e) => e.ip));
    assert.deepEqual(ips().sort(), ["10.244.1.1", "fd00::2:1"]);
    const pnr = service("default", "web", { clusterIP: "10.96.0.20", publishNotReadyAddresses: true });
    store.apply("services", "MODIFIED", pnr);
    assert.deepEqual(ips().sort(), ["10.244.1.1", "10.244.1.2", "10.244.2.1", "fd00::2:1"]);
  });

  it("an endpoint without conditions is ready; a terminating one without ready is not", () => {
    const slice = endpointSlice("default", "web", "web-1", ["10.244.1.1", "10.244.1.2"]);
    delete slice.endpoints![0].conditions;
    slice.endpoints![1].conditions = { terminating: true };
    const { store } = synced([
      ["services", web()],
      ["endpointslices", slice],
    ]);
    const eps = store.endpoints(store.service("default", "web")!).flatMap((g) => g.endpoints);
    assert.deepEqual(
      eps.map((e) => e.ip),
      ["10.244.1.1"],
    );
  });

  it("honours the tolerate-unready-endpoints annotation the spec names", () => {
    const svc = web();
    (svc.metadata as { annotations?: Record<string, string> }).annotations = {
      "service.alpha.kubernetes.io/tolerate-unready-endpoints": "true",
    };
    const { store } = synced([
      ["services", svc],
      ["endpointslices", webSlice({ ip: "10.244.1.9", ready: false })],
    ]);
    assert.equal(store.service("default", "web")!.publishNotReadyAddresses, true);
    assert.equal(store.endpoints(store.service("default", "web")!).length, 1);
  });

  it("uses legacy Endpoints only for a service without slices", () => {
    const legacy = endpoints("default", "web", [
      { addresses: ["10.244.9.1"], notReadyAddresses: ["10.244.9.2"], ports: [{ name: "http", port: 8080 }] },
    ]);
    const { store } = synced([
      ["services", web()],
      ["endpoints", legacy],
    ]);
    store.listStart("endpoints");
    store.apply("endpoints", "ADDED", legacy);
    store.listDone("endpoints");
    const ips = () =>
      store.endpoints(store.service("default", "web")!).flatMap((g) => g.endpoints.map((e) => e.ip));
    assert.deepEqual(ips(), ["10.244.9.1"]);
    store.apply("endpointslices", "ADDED", webSlice("10.244.1.1"));
    assert.deepEqual(ips(), ["10.244.1.1"], "the slice wins over the Endpoints");
    store.apply("endpointslices", "DELETED", webSlice("10.244.1.1"));
    assert.deepEqual(ips(), ["10.244.9.1"]);
  });

  it("names endpoints by hostname, by pod name with endpoint_pod_names, else by dashed address", () => {
    const slice = endpointSlice("default", "web", "web-1", [
      { ip: "10.244.1.1", hostname: "Web-0", pod: "web-0" },
      { ip: "10.244.1.2", pod: "web-7d9f-x2x" },
      { ip: "10.244.1.3" },
      { ip: "10.244.1.4", pod: "dotted.pod.name" },
    ]);
    const names = (podNames: boolean) => {
      const { store } = synced(
        [
          ["services", web()],
          ["endpointslices", slice],
        ],
        { endpointPodNames: podNames },
      );
      return store.endpoints(store.service("default", "web")!)[0].endpoints.map((e) => e.name);
    };
    assert.deepEqual(names(false), ["web-0", "10-244-1-2", "10-244-1-3", "10-244-1-4"]);
    assert.deepEqual(names(true), ["web-0", "web-7d9f-x2x", "10-244-1-3", "10-244-1-4"]);
    assert.equal(dashed("fd00::1"), "fd00--1");
  });

  it("ignores FQDN slices, slices without a service label, and objects without a name", () => {
    const fqdn = endpointSlice("default", "web", "web-f", [{ addresses: ["example.org"] }], {
      ports: [],
      addressType: "FQDN",
    });
    const orphan = endpointSlice("default", "web", "web-o", ["10.244.1.1"]);
    delete orphan.metadata.labels!["kubernetes.io/service-name"];
    const { store } = synced([
      ["services", web()],
      ["endpointslices", fqdn],
      ["endpointslices", orphan],
      ["services", { metadata: {} } as unknown as KObject],
    ]);
    assert.deepEqual(store.endpoints(store.service("default", "web")!), []);
    assert.equal(store.stats().objects.services, 1);
  });

  it("canonicalises addresses and rejects what is not one", () => {
    assert.equal(normalIP("10.0.0.1"), "10.0.0.1");
    assert.equal(normalIP("2001:DB8:0:0:0:0:0:1"), "2001:db8::1");
    assert.equal(normalIP("None"), undefined);
    assert.equal(normalIP(42), undefined);
  });
});

describe("store: namespaces and pods", () => {
  it("a namespace exists with its Namespace object or with a service in it", () => {
    const { store, changes } = synced([["namespaces", namespace("empty")]]);
    assert.equal(store.namespaceExposed("empty"), true);
    assert.equal(store.namespaceExposed("default"), false);
    store.apply("services", "ADDED", web());
    assert.equal(store.namespaceExposed("default"), true);
    assert.deepEqual(changes, ["all"], "a namespace that appears changes ns.svc and pod names: all");
    changes.length = 0;
    store.apply("namespaces", "DELETED", namespace("empty"));
    assert.equal(store.namespaceExposed("empty"), false);
    assert.deepEqual(changes, ["all"]);
  });

  it("with namespace_labels, only namespaces whose labels match are exposed", () => {
    const sel = parseLabelSelector("team=dns");
    const { store, changes } = synced(
      [
        ["namespaces", namespace("a", { team: "dns" })],
        ["namespaces", namespace("b")],
        ["services", service("b", "x", { clusterIP: "10.96.1.1" })],
      ],
      { namespaceSelector: sel },
    );
    assert.equal(store.namespaceExposed("a"), true);
    assert.equal(store.namespaceExposed("b"), false);
    assert.deepEqual(store.ptr("10.96.1.1"), [], "PTR of a hidden namespace is hidden too");
    store.apply("namespaces", "MODIFIED", namespace("b", { team: "dns" }));
    assert.equal(store.namespaceExposed("b"), true);
    assert.deepEqual(changes, ["all"]);
    assert.deepEqual(store.ptr("10.96.1.1"), ["x.b.svc"]);
  });

  it("indexes pods by IP only with keepPods, without finished or deleted pods", () => {
    const pods: [Kind, KObject][] = [
      ["pods", pod("default", "a", "10.244.0.5", { ips: ["10.244.0.5", "fd00::5"] })],
      ["pods", pod("default", "done", "10.244.0.6", { phase: "Succeeded" })],
      [
        "pods",
        {
          ...pod("default", "going", "10.244.0.7"),
          metadata: { name: "going", namespace: "default", deletionTimestamp: "2025-01-01T00:00:00Z" },
        },
      ],
    ];
    assert.deepEqual(synced(pods).store.podsByIP("10.244.0.5"), []);
    const { store, changes } = synced(pods, { keepPods: true });
    assert.deepEqual(store.podsByIP("10.244.0.5"), [{ ns: "default", name: "a" }]);
    assert.deepEqual(store.podsByIP("fd00::5"), [{ ns: "default", name: "a" }]);
    assert.deepEqual(store.podsByIP("10.244.0.6"), []);
    assert.deepEqual(store.podsByIP("10.244.0.7"), []);
    store.apply("pods", "MODIFIED", pod("default", "a", "10.244.0.8"));
    assert.deepEqual(store.podsByIP("10.244.0.5"), []);
    const n = names(changes[0]);
    for (const owner of ["10-244-0-5", "fd00--5", "10-244-0-8"]) {
      assert.ok(n.includes(`${owner}.default.pod.cluster.local.`), `${owner} named in ${n.join(" ")}`);
    }
    store.apply("pods", "MODIFIED", pod("default", "a", "10.244.0.8", { phase: "Running" }));
    assert.equal(changes.length, 1, "a change DNS does not read is no change");
  });

  it("tells a client's namespace from its address only when it is certain", () => {
    const { store } = synced(
      [
        ["pods", pod("default", "a", "10.244.0.5", { ips: ["10.244.0.5", "fd00::5"] })],
        ["pods", pod("kube-system", "proxy", "172.18.0.2", { hostNetwork: true })],
        ["pods", pod("team-a", "old", "10.244.0.9")],
        ["pods", pod("team-b", "new", "10.244.0.9")],
        ["pods", pod("default", "b1", "10.244.0.10")],
        ["pods", pod("default", "b2", "10.244.0.10")],
      ],
      { keepPods: true },
    );
    assert.equal(store.clientNamespace("10.244.0.5"), "default");
    assert.equal(store.clientNamespace("fd00::5"), "default");
    assert.equal(store.clientNamespace("172.18.0.2"), undefined, "a node address is shared");
    assert.equal(store.clientNamespace("10.244.0.9"), undefined, "an address two namespaces claim");
    assert.equal(store.clientNamespace("10.244.0.10"), "default", "two pods of one namespace agree");
    assert.equal(store.clientNamespace("10.244.0.77"), undefined);
    store.apply("pods", "DELETED", pod("team-a", "old", "10.244.0.9"));
    assert.equal(store.clientNamespace("10.244.0.9"), "team-b", "the old pod's deletion settles it");
  });
});

describe("store: changed names", () => {
  it("a new service names its owner, SRV names, its addresses' PTR names and the apexes", () => {
    const { store, changes } = synced();
    store.apply("services", "ADDED", service("default", "ns1", { clusterIP: "10.96.0.1" }));
    changes.length = 0;
    store.apply("services", "ADDED", web());
    // 0.96.10.in-addr.arpa. existed already (ns1): it is not named.
    assert.deepEqual(names(changes[0]), [
      "20.0.96.10.in-addr.arpa.",
      "_http._tcp.web.default.svc.cluster.local.",
      "_tcp.web.default.svc.cluster.local.",
      "cluster.local.",
      "in-addr.arpa.",
      "ip6.arpa.",
      "web.default.svc.cluster.local.",
    ]);
  });

  it("an endpoint turning unready names its name, the service's and the PTR of its address only", () => {
    const { store, changes } = synced([
      ["services", service("default", "hl", { headless: true })],
      [
        "endpointslices",
        endpointSlice(
          "default",
          "hl",
          "hl-1",
          [
            { ip: "10.244.1.1", hostname: "a" },
            { ip: "10.244.1.2", hostname: "b" },
          ],
          { ports: [{ name: "http", port: 80 }] },
        ),
      ],
    ]);
    store.apply(
      "endpointslices",
      "MODIFIED",
      endpointSlice(
        "default",
        "hl",
        "hl-1",
        [
          { ip: "10.244.1.1", hostname: "a" },
          { ip: "10.244.1.2", hostname: "b", ready: false },
        ],
        { ports: [{ name: "http", port: 80 }] },
      ),
    );
    const n = names(changes[0]);
    assert.ok(n.includes("hl.default.svc.cluster.local."));
    assert.ok(n.includes("b.hl.default.svc.cluster.local."));
    assert.ok(n.includes("_http._tcp.hl.default.svc.cluster.local."));
    assert.ok(n.includes("2.1.244.10.in-addr.arpa."));
    assert.ok(!n.includes("a.hl.default.svc.cluster.local."), "the other endpoint did not change");
    assert.ok(!n.includes("1.1.244.10.in-addr.arpa."));
    assert.deepEqual(store.ptr("10.244.1.2"), []);
    assert.deepEqual(store.ptr("10.244.1.1"), ["a.hl.default.svc"]);
  });

  it("endpoint changes leave a cluster IP service's names alone while it keeps an endpoint", () => {
    const { store, changes } = synced([
      ["services", web()],
      ["endpointslices", webSlice("10.244.1.1")],
    ]);
    store.apply("endpointslices", "MODIFIED", webSlice("10.244.1.1", "10.244.1.2"));
    const n = names(changes[0]);
    assert.ok(!n.includes("web.default.svc.cluster.local."));
    assert.ok(n.includes("10-244-1-2.web.default.svc.cluster.local."));
    assert.ok(n.includes("2.1.244.10.in-addr.arpa."));
  });

  it("a slice moved to another service changes both", () => {
    const { store, changes } = synced([
      ["services", service("default", "a", { headless: true })],
      ["services", service("default", "b", { headless: true })],
      ["endpointslices", endpointSlice("default", "a", "s-1", ["10.244.1.1"])],
    ]);
    store.apply("endpointslices", "MODIFIED", endpointSlice("default", "b", "s-1", ["10.244.1.1"]));
    const n = names(changes[0]);
    assert.ok(n.includes("a.default.svc.cluster.local."));
    assert.ok(n.includes("b.default.svc.cluster.local."));
    assert.deepEqual(store.ptr("10.244.1.1"), ["10-244-1-1.b.default.svc"]);
  });

  it("kube-dns names the name server's name; IPv6 addresses name their ip6.arpa names", () => {
    const { store, changes } = synced([["namespaces", namespace("kube-system")]]);
    store.apply(
      "services",
      "ADDED",
      service("kube-system", "kube-dns", { clusterIPs: ["10.96.0.10", "fd00::a"] }),
    );
    const n = names(changes[0]);
    assert.ok(n.includes("ns.dns.cluster.local."));
    assert.ok(n.includes(`${"a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f"}.ip6.arpa.`));
    assert.ok(store.reverseParentExists("0.d.f.ip6.arpa."));
  });

  it("more names than maxNames ask for a full invalidation", () => {
    const { store, changes } = synced([], { maxNames: 5 });
    store.apply("services", "ADDED", web());
    assert.deepEqual(changes, ["all"]);
  });

  it("keeps partial reverse names while some address lies below them", () => {
    const { store } = synced([
      ["services", service("default", "a", { clusterIP: "10.96.0.1" })],
      ["services", service("default", "b", { clusterIP: "10.96.1.1" })],
    ]);
    assert.ok(store.reverseParentExists("10.in-addr.arpa."));
    assert.ok(store.reverseParentExists("0.96.10.in-addr.arpa."));
    store.apply("services", "DELETED", service("default", "a", { clusterIP: "10.96.0.1" }));
    assert.equal(store.reverseParentExists("0.96.10.in-addr.arpa."), false);
    assert.ok(store.reverseParentExists("96.10.in-addr.arpa."));
    assert.equal(store.stats().addresses, 1);
  });
});

describe("store: snapshots", () => {
  const objects: [Kind, KObject][] = [
    ["services", web()],
    ["endpointslices", webSlice({ ip: "10.244.1.1", hostname: "web-0" })],
    ["namespaces", namespace("default")],
    ["pods", pod("default", "web-0", "10.244.1.1")],
  ];

  it("restores a dump into a fresh store, which then serves it as a snapshot", () => {
    const from = synced(objects, { keepPods: true }).store;
    const dump = JSON.parse(JSON.stringify(from.dump())) as ReturnType<Store["dump"]>;
    const changes: (readonly string[] | "all")[] = [];
    const store = new Store({
      zones: ZONES,
      waitFor: ALL,
      keepPods: true,
      onChange: (n) => void changes.push(n),
    });
    assert.equal(store.servingFrom, "none");
    assert.deepEqual(store.restore(dump).sort(), [
      "endpoints",
      "endpointslices",
      "namespaces",
      "pods",
      "services",
    ]);
    assert.equal(store.synced, true);
    assert.equal(store.servingFrom, "snapshot");
    assert.deepEqual(changes, ["all"]);
    // As a snapshot holds them (each store's endpoints are of its own class).
    assert.deepEqual(JSON.parse(JSON.stringify(store.dump())), dump);
    assert.equal(store.clientNamespace("10.244.1.1"), "default");
  });

  it("lets the API's lists replace it kind by kind, dropping what the API no longer has", async () => {
    const dump = synced(objects, { keepPods: true }).store.dump();
    const store = new Store({ zones: ZONES, waitFor: ALL, keepPods: true });
    store.restore(dump);
    let api = false;
    void store.whenApi().then(() => (api = true));
    store.listStart("services");
    store.apply("services", "ADDED", service("default", "other", { clusterIP: "10.96.0.21" }));
    store.listDone("services");
    assert.equal(store.service("default", "web"), undefined, "gone from the API: gone");
    assert.ok(store.service("default", "other"));
    assert.equal(store.servingFrom, "snapshot", "other kinds still come from the snapshot");
    for (const kind of ["endpointslices", "namespaces", "pods"] as const) {
      store.listStart(kind);
      store.listDone(kind);
    }
    assert.equal(store.servingFrom, "api");
    assert.deepEqual(store.dump().endpointslices, []);
    assert.equal(store.clientNamespace("10.244.1.1"), undefined);
    await Promise.resolve();
    assert.equal(api, true);
  });

  it("does not restore a kind the API already listed, nor keep snapshot Endpoints once slices listed", () => {
    const old = new Store({ zones: ZONES, waitFor: ["endpoints"] });
    old.listStart("endpoints");
    old.apply("endpoints", "ADDED", endpoints("default", "old", [{ addresses: ["10.244.9.9"] }]));
    old.listDone("endpoints");
    const legacy = old.dump();
    const store = new Store({ zones: ZONES, waitFor: ["services", "endpointslices"] });
    store.listStart("services");
    store.apply("services", "ADDED", web("10.96.0.99"));
    store.listDone("services");
    assert.deepEqual(store.restore({ ...legacy, services: [] }).sort(), [
      "endpoints",
      "endpointslices",
      "namespaces",
      "pods",
    ]);
    assert.equal(store.service("default", "web")?.clusterIPs[0], "10.96.0.99");
    assert.equal(store.dump().endpoints.length, 1);
    store.listStart("endpointslices");
    store.listDone("endpointslices");
    assert.deepEqual(store.dump().endpoints, [], "the API serves slices: the snapshot's Endpoints go");
    assert.equal(store.servingFrom, "api");
  });
});

describe("store: external addresses, zones, the name server's services", () => {
  const lb = (ips: string[]) =>
    service("default", "lb", {
      type: "LoadBalancer",
      clusterIP: "10.96.0.9",
      ports: [{ name: "http", port: 80 }],
      ingress: ips.map((ip) => ({ ip })),
    });

  it("indexes external addresses for PTR and names their reverse names when they change", () => {
    const { store, changes } = synced([["namespaces", namespace("default")]]);
    store.apply("services", "ADDED", lb(["203.0.113.9"]));
    assert.ok(names(changes[0]).includes("9.113.0.203.in-addr.arpa."));
    assert.deepEqual(
      store.externalServices("203.0.113.9").map((s) => s.name),
      ["lb"],
    );
    assert.deepEqual(store.ptr("203.0.113.9"), [], "the kubernetes plugin publishes no PTR for it");
    store.apply("services", "MODIFIED", lb(["203.0.113.10"]));
    const n = names(changes[1]);
    assert.ok(n.includes("9.113.0.203.in-addr.arpa.") && n.includes("10.113.0.203.in-addr.arpa."));
    assert.deepEqual(store.externalServices("203.0.113.9"), []);
    store.apply("services", "DELETED", lb(["203.0.113.10"]));
    assert.deepEqual(store.externalServices("203.0.113.10"), []);
  });

  it("a view gets the store's service names under its own zones, and its apex with every change", () => {
    const { store, changes } = synced([["namespaces", namespace("default")]]);
    store.addView({
      zones: ["example.com."],
      apexes: ["example.com.", "in-addr.arpa."],
      map: (r) => (r.endsWith(".svc") ? r.slice(0, -4) : r === "ns.dns" ? "ns1.dns" : undefined),
    });
    store.apply("services", "ADDED", lb(["203.0.113.9"]));
    const n = names(changes[0]);
    for (const name of [
      "lb.default.example.com.",
      "_http._tcp.lb.default.example.com.",
      "example.com.",
      "in-addr.arpa.",
    ]) {
      assert.ok(n.includes(name), name);
    }
    assert.ok(n.includes("lb.default.svc.cluster.local."));
  });

  it("zonal names change with an endpoint's zone (with zonal, of a headless service)", () => {
    const slice = (zone: string) =>
      endpointSlice("default", "hl", "hl-abcde", [{ ip: "10.244.1.1", zone }], {
        ports: [{ name: "http", port: 80 }],
      });
    const { store, changes } = synced(
      [
        ["services", service("default", "hl", { headless: true })],
        ["endpointslices", slice("zone-a")],
      ],
      { names: { zonal: true } },
    );
    store.apply("endpointslices", "MODIFIED", slice("zone-b"));
    const n = names(changes[0]);
    for (const name of ["zone-a.pin", "zone-b.pin", "zone-a.prefer", "zone-b.prefer"])
      assert.ok(n.includes(`${name}._zone.hl.default.svc.cluster.local.`), name);
    assert.ok(!n.includes("hl.default.svc.cluster.local."), "the service's own answer did not change");
  });

  it("the services selecting this server's own address are the name server's, and name ns.dns", () => {
    const dns = service("kube-system", "clusterdns", { clusterIP: "10.96.0.53", ports: [53] });
    const own = (ready: boolean) =>
      endpointSlice("kube-system", "clusterdns", "clusterdns-1", [{ ip: "10.244.0.5", ready }]);
    const { store, changes } = synced(
      [
        ["namespaces", namespace("kube-system")],
        ["services", dns],
        ["endpointslices", own(false)],
      ],
      { localIPs: ["10.244.0.5"] },
    );
    assert.deepEqual(store.localServices(), [], "its endpoint is not ready yet");
    store.apply("endpointslices", "MODIFIED", own(true));
    assert.ok(names(changes[0]).includes("ns.dns.cluster.local."));
    assert.deepEqual(
      store.localServices().map((s) => s.name),
      ["clusterdns"],
    );
  });
});

describe("store: DNS programming latency (endpoints.kubernetes.io/last-change-trigger-time)", () => {
  const TRIGGER = "endpoints.kubernetes.io/last-change-trigger-time";
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  const slice = (svc: string, ip: string, when?: string) =>
    endpointSlice("default", svc, `${svc}-1`, [ip], {
      ports: [],
      ...(when ? { annotations: { [TRIGGER]: when } } : {}),
    });

  function recording(objects: [Kind, KObject][] = []) {
    const seen: [string, number][] = [];
    const r = synced(
      [
        ["services", service("default", "hl", { headless: true })],
        ["services", service("default", "web", { clusterIP: "10.96.0.20" })],
        ...objects,
      ],
      { onProgrammed: (kind, seconds) => void seen.push([kind, seconds]) },
    );
    return { ...r, seen };
  }

  it("a watch event of a headless service's endpoints observes the time since the trigger", () => {
    const { store, seen } = recording();
    store.apply("endpointslices", "ADDED", slice("hl", "10.244.1.1", at(1500)));
    store.apply(
      "endpoints",
      "MODIFIED",
      endpoints("default", "hl", [{ addresses: ["10.244.1.2"] }], undefined, { [TRIGGER]: at(500) }),
    );
    assert.deepEqual(
      seen.map(([k]) => k),
      ["headless_with_selector", "headless_with_selector"],
    );
    assert.ok(seen[0][1] >= 1.5 && seen[0][1] < 60, `${seen[0][1]} s`);
    assert.ok(seen[1][1] >= 0.5 && seen[1][1] < 60, `${seen[1][1]} s`);
  });

  it("a cluster IP service's endpoints are observed as cluster_ip (CoreDNS 1.14.3 and later)", () => {
    const { store, seen } = recording();
    store.apply("endpointslices", "ADDED", slice("web", "10.244.2.1", at(100)));
    assert.deepEqual(
      seen.map(([k]) => k),
      ["cluster_ip"],
    );
  });

  it("observes nothing without the annotation, for a bad time or a deletion", () => {
    const { store, seen } = recording();
    store.apply("endpointslices", "ADDED", endpointSlice("default", "hl", "hl-2", ["10.244.1.3"]));
    store.apply("endpointslices", "MODIFIED", slice("hl", "10.244.1.1", "yesterday"));
    store.apply("endpointslices", "DELETED", slice("hl", "10.244.1.1", at(100)));
    assert.deepEqual(seen, []);
  });

  it("observes nothing for what a LIST delivers: its trigger times can be hours old", () => {
    const { store, seen } = recording([["endpointslices", slice("hl", "10.244.1.1", at(3_600_000))]]);
    store.listStart("endpointslices");
    store.apply("endpointslices", "ADDED", slice("hl", "10.244.1.1", at(7_200_000)));
    store.listDone("endpointslices");
    assert.deepEqual(seen, []);
  });
});
