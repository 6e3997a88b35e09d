import { test } from "node:test";
import assert from "node:assert/strict";
import { Store } from "../store/store.ts";
import { explain } from "./explain.ts";
import type { Kind, KObject } from "../model/source.ts";
import { endpointSlice, namespace, service } from "../../../../test/k8s/objects.ts";

test("explain names an endpoint's zone and hints, and the endpoints a zonal name stands for", () => {
  const kinds: Kind[] = ["services", "endpointslices", "namespaces"];
  const objects: [Kind, KObject][] = [
    ["namespaces", namespace("default")],
    ["services", service("default", "web", { headless: true, ports: [80] })],
    [
      "endpointslices",
      endpointSlice("default", "web", "web-1", [
        { ip: "10.244.1.1", zone: "zone-a", hints: ["zone-a", "zone-b"] },
        { ip: "10.244.1.2", zone: "zone-b" },
      ]),
    ],
  ];
  const store = new Store({ zones: ["cluster.local."], waitFor: kinds, names: { zonal: true } });
  for (const kind of kinds) {
    store.listStart(kind);
    for (const [k, o] of objects) if (k === kind) store.apply(kind, "ADDED", o);
    store.listDone(kind);
  }
  const o = { zones: ["cluster.local."], ttl: 5, pods: "disabled" as const };
  assert.deepEqual(explain(store, o, "cluster.local.", "zone-a.pin._zone.web.default.svc.cluster.local."), [
    "Service default/web: headless",
    "a zonal name: the endpoints in zone 'zone-a'",
    "EndpointSlice default/web-1: 10.244.1.1 as '10-244-1-1' (ready, zone zone-a, hints for zone-a zone-b)",
  ]);
  assert.deepEqual(
    explain(store, o, "cluster.local.", "zone-c.pin._zone.web.default.svc.cluster.local.").at(-1),
    "no endpoint in zone 'zone-c'",
  );
});

test("explain says a zonal name is not one without the zonal option", () => {
  const store = new Store({ zones: ["cluster.local."], waitFor: [] });
  store.apply("namespaces", "ADDED", namespace("default"));
  store.apply("services", "ADDED", service("default", "web", { headless: true }));
  const o = { zones: ["cluster.local."], ttl: 5, pods: "disabled" as const };
  assert.deepEqual(explain(store, o, "cluster.local.", "zone-a.pin._zone.web.default.svc.cluster.local."), [
    "Service default/web: headless",
    "zonal names are off: the kubernetes block has no 'zonal'",
  ]);
});
