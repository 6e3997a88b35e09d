// The store's scenarios (a subset of store.test.ts's) over tables that hold values by value: copying
// tables (every value through its codec, iterated newest first) and a shared index's. A store that
// relied on getting back the object it stored (identity, an array changed in place, insertion order)
// fails here. Reader stores (Store.reader) read the tables their writer filled.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kind, KObject } from "../model/source.ts";
import type { StoreOptions } from "./store-options.ts";
import type { Tables } from "../../../offheap/table.ts";
import { Store } from "./store.ts";
import { parseLabelSelector } from "../model/label-selector.ts";
import { copyingTables } from "../../../offheap/copying-tables.ts";
import { IndexReader, SharedIndex } from "../../../offheap/shared-index.ts";
import { endpointSlice, endpoints, namespace, pod, service } from "../../../../test/k8s/objects.ts";
import {
  ALL,
  ZONES,
  names,
  synced as syncedOver,
  web,
  webSlice,
} from "../../../../test/k8s/store-fixtures.ts";

const ips = (store: Store, name = "web") =>
  store.endpoints(store.service("default", name)!).flatMap((g) => g.endpoints.map((e) => e.ip));

/** Tables that hold values by value, each made fresh per store: the copying ones (every value through
 * its codec, iterated newest first) and a shared index's (iterated in its hash order). */
const BY_VALUE: [string, () => Tables][] = [
  ["copying tables", copyingTables],
  ["a shared index", () => new SharedIndex({ initial: 64 << 10 })],
];

const SNAPSHOT_OBJECTS: [Kind, KObject][] = [
  ["services", web()],
  ["services", service("default", "a", { clusterIP: "10.96.0.1" })],
  ["endpointslices", webSlice({ ip: "10.244.1.1", hostname: "web-0" })],
  ["namespaces", namespace("default")],
  ["pods", pod("default", "web-0", "10.244.1.1")],
];

for (const [over, make] of BY_VALUE) {
  /** A store over fresh tables (see store-fixtures.ts's synced). */
  const synced = (objects: [Kind, KObject][] = [], o: Partial<StoreOptions> = {}) =>
    syncedOver(objects, { tables: make(), ...o });

  describe(`store over ${over}: services and endpoints`, () => {
    it("reads back every kind of record as the same JSON it stored, so identical objects compare equal", () => {
      const objects: [Kind, KObject][] = [
        ["namespaces", namespace("default", { team: "dns" })],
        ["services", web()],
        ["services", service("default", "hl", { headless: true, ports: [{ name: "http", port: 80 }] })],
        ["services", service("default", "ext", { externalName: "www.example.org" })],
        [
          "services",
          service("default", "lb", {
            type: "LoadBalancer",
            clusterIP: "10.96.0.9",
            externalIPs: ["198.51.100.1"],
            ingress: [{ ip: "203.0.113.9" }, { hostname: "lb.example.com" }],
          }),
        ],
        ["endpointslices", webSlice({ ip: "10.244.1.1", hostname: "web-0", zone: "z1", hints: ["z1"] })],
        ["endpointslices", endpointSlice("default", "hl", "hl-1", [{ ip: "fd00::1", ready: false }])],
        ["pods", pod("default", "web-0", "10.244.1.1", { ips: ["10.244.1.1", "fd00::1"] })],
        ["pods", pod("kube-system", "proxy", "172.18.0.2", { hostNetwork: true })],
      ];
      const heap = syncedOver(objects, { keepPods: true }).store.dump();
      const copied = synced(objects, { keepPods: true }).store.dump();
      assert.equal(JSON.stringify(copied), JSON.stringify(heap));
    });

    it("keeps services; a relist of identical objects changes nothing", () => {
      const objects: [Kind, KObject][] = [
        ["services", service("default", "dual", { clusterIPs: ["10.96.0.7", "FD00:0:0:0:0:0:0:7"] })],
        ["services", service("default", "ext", { externalName: "WWW.Example.ORG" })],
        ["services", web()],
        ["endpointslices", webSlice("10.244.1.1")],
      ];
      const { store, changes } = synced(objects);
      assert.deepEqual(store.service("default", "dual")!.clusterIPs, ["10.96.0.7", "fd00::7"]);
      assert.equal(store.service("default", "ext")!.externalName, "www.example.org.");
      for (const kind of ALL) {
        store.listStart(kind);
        for (const [k, obj] of objects) if (k === kind) store.apply(kind, "MODIFIED", obj);
        store.listDone(kind);
      }
      assert.deepEqual(changes, [], "copies compare equal by content");
      assert.equal(store.stats().objects.services, 3);
    });

    it("merges a service's slices and follows their changes (ready, publishNotReadyAddresses)", () => {
      const { store } = synced([
        ["services", web()],
        [
          "endpointslices",
          endpointSlice("default", "web", "web-1", ["10.244.1.1", { ip: "10.244.1.2", ready: false }]),
        ],
        ["endpointslices", endpointSlice("default", "web", "web-2", ["10.244.2.1", "fd00::2:1"])],
      ]);
      assert.deepEqual(ips(store).sort(), ["10.244.1.1", "10.244.2.1", "fd00::2:1"]);
      store.apply("endpointslices", "MODIFIED", endpointSlice("default", "web", "web-2", ["10.244.2.1"]));
      assert.deepEqual(ips(store).sort(), ["10.244.1.1", "10.244.2.1"]);
      store.apply(
        "services",
        "MODIFIED",
        service("default", "web", { clusterIP: "10.96.0.20", publishNotReadyAddresses: true }),
      );
      assert.deepEqual(ips(store).sort(), ["10.244.1.1", "10.244.1.2", "10.244.2.1"]);
      store.apply("endpointslices", "DELETED", endpointSlice("default", "web", "web-1", []));
      assert.deepEqual(ips(store), ["10.244.2.1"]);
      assert.deepEqual(store.ptr("10.244.1.1"), [], "a deleted slice's address has no PTR left");
    });

    it("a slice relabelled to another service moves, and both services' names change", () => {
      const { store, changes } = synced([
        ["services", service("default", "a", { headless: true })],
        ["services", service("default", "b", { headless: true })],
        ["endpointslices", endpointSlice("default", "a", "s-1", ["10.244.1.1"])],
      ]);
      store.apply("endpointslices", "MODIFIED", endpointSlice("default", "b", "s-1", ["10.244.1.1"]));
      const n = names(changes[0]);
      assert.ok(n.includes("a.default.svc.cluster.local.") && n.includes("b.default.svc.cluster.local."));
      assert.deepEqual(ips(store, "a"), []);
      assert.deepEqual(ips(store, "b"), ["10.244.1.1"]);
      assert.deepEqual(store.ptr("10.244.1.1"), ["10-244-1-1.b.default.svc"]);
    });

    it("uses legacy Endpoints only for a service without slices", () => {
      const legacy = endpoints("default", "web", [
        {
          addresses: ["10.244.9.1"],
          notReadyAddresses: ["10.244.9.2"],
          ports: [{ name: "http", port: 8080 }],
        },
      ]);
      const { store } = synced([["services", web()]]);
      store.listStart("endpoints");
      store.apply("endpoints", "ADDED", legacy);
      store.listDone("endpoints");
      assert.deepEqual(ips(store), ["10.244.9.1"]);
      store.apply("endpointslices", "ADDED", webSlice("10.244.1.1"));
      assert.deepEqual(ips(store), ["10.244.1.1"], "the slice wins over the Endpoints");
      store.apply("endpointslices", "DELETED", webSlice("10.244.1.1"));
      assert.deepEqual(ips(store), ["10.244.9.1"]);
    });
  });

  describe(`store over ${over}: namespaces, pods, addresses`, () => {
    it("with namespace_labels, only namespaces whose labels match are exposed", () => {
      const { store, changes } = synced(
        [
          ["namespaces", namespace("a", { team: "dns" })],
          ["namespaces", namespace("b")],
          ["services", service("b", "x", { clusterIP: "10.96.1.1" })],
        ],
        { namespaceSelector: parseLabelSelector("team=dns") },
      );
      assert.equal(store.namespaceExposed("a"), true);
      assert.equal(store.namespaceExposed("b"), false);
      assert.deepEqual(store.ptr("10.96.1.1"), []);
      store.apply("namespaces", "MODIFIED", namespace("b", { team: "dns" }));
      assert.deepEqual(changes, ["all"]);
      assert.deepEqual(store.ptr("10.96.1.1"), ["x.b.svc"]);
    });

    it("indexes pods by IP, and each change of an address's pods is a new list", () => {
      const { store } = synced(
        [
          ["pods", pod("team-a", "old", "10.244.0.9")],
          ["pods", pod("team-b", "new", "10.244.0.9")],
          ["pods", pod("default", "a", "10.244.0.5", { ips: ["10.244.0.5", "fd00::5"] })],
        ],
        { keepPods: true },
      );
      const held = store.podsByIP("10.244.0.9");
      assert.equal(store.clientNamespace("10.244.0.9"), undefined, "an address two namespaces claim");
      store.apply("pods", "DELETED", pod("team-a", "old", "10.244.0.9"));
      assert.equal(store.clientNamespace("10.244.0.9"), "team-b");
      assert.equal(held.length, 2, "a list read before the change is not changed by it");
      store.apply("pods", "MODIFIED", pod("default", "a", "10.244.0.8"));
      assert.deepEqual(store.podsByIP("10.244.0.5"), []);
      assert.deepEqual(store.podsByIP("10.244.0.8"), [{ ns: "default", name: "a" }]);
    });

    it("answers PTR and partial reverse names from the address index", () => {
      const { store } = synced([
        ["services", service("default", "a", { clusterIP: "10.96.0.1" })],
        ["services", service("default", "b", { clusterIP: "10.96.1.1" })],
        ["services", service("default", "hl", { headless: true })],
        ["endpointslices", endpointSlice("default", "hl", "hl-1", [{ ip: "10.96.0.1", hostname: "x" }])],
      ]);
      assert.deepEqual(store.ptr("10.96.0.1"), ["a.default.svc", "x.hl.default.svc"]);
      assert.ok(store.reverseParentExists("0.96.10.in-addr.arpa."));
      store.apply("services", "DELETED", service("default", "a", { clusterIP: "10.96.0.1" }));
      store.apply("services", "DELETED", service("default", "hl", { headless: true }));
      assert.equal(store.reverseParentExists("0.96.10.in-addr.arpa."), false);
      assert.ok(store.reverseParentExists("96.10.in-addr.arpa."));
      assert.equal(store.stats().addresses, 1);
    });

    it("lists a service that selects two of this server's addresses once", () => {
      const dns = service("kube-system", "clusterdns", { clusterIP: "10.96.0.53", ports: [53] });
      const { store } = synced(
        [
          ["namespaces", namespace("kube-system")],
          ["services", dns],
          ["endpointslices", endpointSlice("kube-system", "clusterdns", "c-1", ["10.244.0.5", "fd00::5"])],
        ],
        { localIPs: ["10.244.0.5", "fd00::5"] },
      );
      assert.deepEqual(
        store.localServices().map((s) => s.name),
        ["clusterdns"],
      );
    });
  });

  describe(`store over ${over}: snapshots`, () => {
    it("a dump, sorted by key, restores into a fresh store that dumps the same", () => {
      const from = synced(SNAPSHOT_OBJECTS, { keepPods: true }).store;
      const dump = JSON.parse(JSON.stringify(from.dump())) as ReturnType<Store["dump"]>;
      assert.deepEqual(
        dump.services.map(([k]) => k),
        ["default/a", "default/web"],
      );
      const store = new Store({ zones: ZONES, waitFor: ALL, keepPods: true, tables: make() });
      store.restore(dump);
      assert.equal(store.servingFrom, "snapshot");
      assert.deepEqual(JSON.parse(JSON.stringify(store.dump())), dump);
      assert.deepEqual(ips(store), ["10.244.1.1"]);
      assert.equal(store.clientNamespace("10.244.1.1"), "default");
    });
  });
}

describe("store readers", () => {
  it("a reader reads what its writer wrote, takes its state, and refuses changes", async () => {
    const tables = copyingTables();
    const { store, options } = syncedOver(SNAPSHOT_OBJECTS, { keepPods: true, tables });
    const reader = Store.reader({ ...options, tables });
    assert.equal(reader.synced, false, "not synced until the writer says so");
    let api = false;
    void reader.whenApi().then(() => (api = true));
    reader.readerState({ synced: true, fromApi: true, modified: store.modified });
    assert.equal(reader.servingFrom, "api");
    assert.equal(reader.modified, store.modified);
    assert.deepEqual(ips(reader), ["10.244.1.1"]);
    assert.deepEqual(reader.ptr("10.244.1.1"), ["web-0.web.default.svc"]);
    store.apply("endpointslices", "MODIFIED", webSlice("10.244.1.2"));
    assert.deepEqual(ips(reader), ["10.244.1.2"], "the writer's change is the reader's");
    assert.throws(() => reader.apply("services", "ADDED", web()), /reader/);
    assert.throws(() => reader.listStart("services"), /reader/);
    assert.throws(() => reader.restore(store.dump()), /reader/);
    assert.throws(() => store.readerState({ synced: true, fromApi: true, modified: 0 }), /reader/);
    await Promise.resolve();
    assert.equal(api, true);
  });

  it("a reader over a shared index's IndexReader answers what a writer over the index wrote", () => {
    const index = new SharedIndex();
    const { store, options } = syncedOver(SNAPSHOT_OBJECTS, { keepPods: true, tables: index });
    const reader = Store.reader({ ...options, tables: new IndexReader(index.handle, 0) });
    reader.readerState({ synced: true, fromApi: true, modified: store.modified });
    assert.equal(JSON.stringify(reader.dump()), JSON.stringify(store.dump()));
    assert.deepEqual(reader.ptr("10.244.1.1"), ["web-0.web.default.svc"]);
    assert.ok(reader.reverseParentExists("244.10.in-addr.arpa."));
    assert.equal(reader.clientNamespace("10.244.1.1"), "default");
    store.apply("services", "DELETED", web());
    assert.equal(reader.service("default", "web"), undefined);
    assert.deepEqual(reader.ptr("10.244.1.1"), []);
    index.retire();
  });
});
