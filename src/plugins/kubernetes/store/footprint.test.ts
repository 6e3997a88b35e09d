import { test } from "node:test";
import assert from "node:assert/strict";
import { changedNames, footprint } from "./footprint.ts";
import { ServiceNames } from "../names/service-names.ts";
import type { EndpointGroup, Service } from "../model/slim-types.ts";

// changedNames compares what each name holds, record by record, and k8s_external's view as a whole.

const names = new ServiceNames();
const http = { name: "http", proto: "tcp", port: 80 };
const base = "web.default.svc";

function headless(external?: string[]): Service {
  return {
    name: "web",
    ns: "default",
    type: "ClusterIP",
    clusterIPs: [],
    headless: true,
    ports: [http],
    publishNotReadyAddresses: false,
    ...(external ? { external } : {}),
  };
}

function group(...ips: string[]): EndpointGroup[] {
  const endpoints = ips.map((ip) => ({ ip, name: ip.replaceAll(".", "-"), ready: true }));
  return [{ service: "default/web", ports: [http], endpoints }];
}

const changed = (a: Parameters<typeof footprint>, b: Parameters<typeof footprint>) =>
  changedNames(footprint(...a), footprint(...b)).sort();

test("the same records: nothing changed, though every holding is a new object", () => {
  assert.deepEqual(
    changed([names, headless(), group("10.0.0.1")], [names, headless(), group("10.0.0.1")]),
    [],
  );
});

test("a new endpoint changes the names that hold it and adds its own; the proto name holds nothing either way", () => {
  assert.deepEqual(
    changed([names, headless(), group("10.0.0.1")], [names, headless(), group("10.0.0.1", "10.0.0.2")]),
    [`10-0-0-2.${base}`, `_http._tcp.${base}`, base],
  );
  // Only the order of the endpoints: the records come in another order, which answers differently.
  assert.deepEqual(
    changed(
      [names, headless(), group("10.0.0.1", "10.0.0.2")],
      [names, headless(), group("10.0.0.2", "10.0.0.1")],
    ),
    [`_http._tcp.${base}`, base],
  );
});

test("with k8s_external: a name its view keeps while the list drops it changes (NODATA to NXDOMAIN)", () => {
  const ext = ["203.0.113.9"];
  // The last endpoint goes: the headless service has no name left in the list; the view still
  // publishes the service's own name and its SRV names, now from the view alone.
  assert.deepEqual(changed([names, headless(ext), group("10.0.0.1")], [names, headless(ext), []]), [
    `10-0-0-1.${base}`,
    `_http._tcp.${base}`,
    `_tcp.${base}`,
    base,
  ]);
  assert.deepEqual(changed([names, headless(ext), []], [names, headless(ext), []]), []);
});

test("with k8s_external: a new external address changes every name, though the list is the same", () => {
  const before = footprint(names, headless(["203.0.113.9"]), group("10.0.0.1"));
  const after = footprint(names, headless(["203.0.113.10"]), group("10.0.0.1"));
  assert.deepEqual(changedNames(before, after).sort(), [...before.names.keys()].sort());
  assert.ok(before.names.size >= 4);
});
