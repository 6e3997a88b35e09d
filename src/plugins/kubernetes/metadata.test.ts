import { test } from "node:test";
import assert from "node:assert/strict";
import { parseName } from "./metadata.ts";

test("names parse as CoreDNS's parseRequest has them", () => {
  const zone = "cluster.local.";
  const p = (name: string) => parseName(name, zone);
  const none = { kind: "", namespace: "", service: "", endpoint: "", port: "", protocol: "" };
  assert.deepEqual(p("cluster.local."), none);
  assert.deepEqual(p("svc.cluster.local."), none);
  assert.deepEqual(p("ns.svc.cluster.local."), { ...none, kind: "svc", namespace: "ns" });
  assert.deepEqual(p("web.ns.svc.cluster.local."), { ...none, kind: "svc", namespace: "ns", service: "web" });
  assert.deepEqual(p("web-0.web.ns.svc.cluster.local."), {
    ...none,
    kind: "svc",
    namespace: "ns",
    service: "web",
    endpoint: "web-0",
  });
  assert.deepEqual(p("_http._tcp.web.ns.svc.cluster.local."), {
    ...none,
    kind: "svc",
    namespace: "ns",
    service: "web",
    port: "http",
    protocol: "tcp",
  });
  assert.deepEqual(p("10-0-0-1.ns.pod.cluster.local."), {
    ...none,
    kind: "pod",
    namespace: "ns",
    service: "10-0-0-1",
  });
  assert.equal(p("a.b.c.d.ns.svc.cluster.local.").error, "invalid request", "too long");
  assert.equal(p("web.ns.cluster.local.").error, "invalid request", "neither svc nor pod");
});
