import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Slimmer, slimPorts } from "./slim.ts";
import { Topologies } from "./packed.ts";
import { endpointSlice, service } from "../../../../test/k8s/objects.ts";

describe("slim: what k8s_external publishes of a service", () => {
  const slim = new Slimmer();

  it("keeps externalIPs, then ingress addresses, then ingress hostnames, canonical and once", () => {
    const svc = slim.service(
      service("default", "lb", {
        type: "LoadBalancer",
        clusterIP: "10.96.0.7",
        ports: [80],
        externalIPs: ["192.0.2.1", "FD00:0:0:0:0:0:0:1"],
        ingress: [{ ip: "203.0.113.9" }, { hostname: "LB-1.Example.NET" }, { ip: "192.0.2.1" }],
      }),
    )!;
    assert.deepEqual(svc.external, ["192.0.2.1", "fd00::1", "203.0.113.9", "lb-1.example.net."]);
  });

  it("leaves the field off a service that has none, and drops what is neither address nor name", () => {
    const plain = slim.service(service("default", "web", { clusterIP: "10.96.0.8", ports: [80] }))!;
    assert.equal("external" in plain, false);
    const bad = slim.service(
      service("default", "bad", {
        type: "LoadBalancer",
        ports: [80],
        externalIPs: ["not-an-ip"],
        ingress: [{ hostname: "under score.example" }],
      }),
    )!;
    assert.equal("external" in bad, false);
  });
});

describe("slim: an endpoint's zone and topology hints", () => {
  it("keeps them lowercase, and reads them back from a snapshot's JSON", () => {
    const slim = new Slimmer();
    const g = slim.slice(
      endpointSlice("default", "web", "web-1", [
        { ip: "10.244.1.1", zone: "Europe-West1-B", hints: ["europe-west1-b", "europe-west1-c"] },
        { ip: "10.244.1.2", zone: "europe-west1-c" },
        { ip: "10.244.1.3", ready: false },
        { ip: "10.244.1.4", zone: "not a label" },
        { ip: "10.244.1.5", zone: "Corp.Example.com" },
      ]),
    )!;
    const [a, b, c, d, e] = g.endpoints;
    assert.equal(a.zone, "europe-west1-b");
    assert.deepEqual(a.forZones, ["europe-west1-b", "europe-west1-c"]);
    assert.equal(a.ready, true);
    assert.equal(b.zone, "europe-west1-c");
    assert.equal(b.forZones, undefined);
    assert.equal(c.zone, undefined);
    assert.equal(c.ready, false);
    assert.equal(d.zone, undefined, "a zone no DNS name can name is left out");
    assert.equal(e.zone, "corp.example.com", "labels joined by dots (CoreDNS: a zonal name spans them)");
    const back = slim.pack(JSON.parse(JSON.stringify(g)) as typeof g);
    assert.deepEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(g)));
    assert.deepEqual(JSON.parse(JSON.stringify(c)), { ip: "10.244.1.3", name: "10-244-1-3", ready: false });
  });
});

describe("slim: the topologies table is one store's", () => {
  it("is kept per Slimmer, and stops growing at its bound: further ones read as none", () => {
    const t = new Topologies();
    assert.equal(t.indexOf(undefined), 0);
    assert.equal(t.indexOf({ zone: "a" }), 1);
    assert.equal(t.indexOf({ zone: "a" }), 1, "kept once");
    for (let i = 0; i < 70_000; i++) t.indexOf({ zone: `z${i}` });
    assert.equal(t.indexOf({ zone: "past-the-bound" }), 0);
    assert.deepEqual(t.at(1), { zone: "a" });
    // Two stores' endpoints read their own tables.
    const [x, y] = [new Slimmer(), new Slimmer()];
    const one = (s: Slimmer, zone: string) =>
      s.slice(endpointSlice("default", "web", "web-1", [{ ip: "10.244.1.1", zone }]))!.endpoints[0];
    const ex = one(x, "zone-x");
    const ey = one(y, "zone-y");
    assert.equal(ex.zone, "zone-x");
    assert.equal(ey.zone, "zone-y");
  });
});

describe("slim: a group read back from a snapshot by a store of its own", () => {
  it("keeps each endpoint's own address, name and readiness beside a zone it shares", () => {
    const snapshot = {
      service: "default/web",
      ports: [],
      endpoints: [
        { ip: "10.0.0.1", name: "a", ready: true, zone: "z1" },
        { ip: "10.0.0.2", name: "10-0-0-2", ready: false, zone: "z1" },
        { ip: "10.0.0.3", name: "10-0-0-3", ready: true, zone: "z1", forZones: ["z1", "z2"] },
        { ip: "10.0.0.4", name: "10-0-0-4", ready: true, zone: "z1", forZones: ["z1", "z2"] },
      ],
    };
    const back = new Slimmer().pack(snapshot);
    assert.deepEqual(JSON.parse(JSON.stringify(back)), snapshot);
  });
});

describe("slim: ports", () => {
  it("drops a port number no port can have, which the store's tables could not hold", () => {
    const ports = slimPorts([
      { name: "HTTP", port: 80 },
      { port: -1 },
      { port: 1.5 },
      { port: 70_000 },
      { port: 0, protocol: "UDP" },
      { port: 65535, protocol: "SCTP" },
    ]);
    assert.deepEqual(ports, [
      { name: "http", proto: "tcp", port: 80 },
      { name: "", proto: "udp", port: 0 },
      { name: "", proto: "sctp", port: 65535 },
    ]);
  });
});
