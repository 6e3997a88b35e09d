// A small cluster with every kind of name the kubernetes plugin answers, and the questions to ask of
// it: the table the wire lane is compared against the plugin chain with (src/answers/lane.test.ts,
// src/plugins/kubernetes/answers/decision.test.ts).

import { Type } from "../../src/dns/constants.ts";
import { endpointSlice, namespace, service } from "./objects.ts";

export const laneObjects = [
  namespace("default"),
  namespace("web"),
  service("default", "nginx", { clusterIP: "10.96.0.20", ports: [{ name: "http", port: 80 }] }),
  endpointSlice("default", "nginx", "nginx-1", ["10.244.0.5", "10.244.0.6"], {
    ports: [{ name: "http", port: 8080 }],
  }),
  service("default", "dual", {
    clusterIPs: ["10.96.0.21", "fd00::21"],
    ports: [{ name: "dns", port: 53, protocol: "UDP" }],
  }),
  endpointSlice("default", "dual", "dual-1", ["10.244.0.7"], {
    ports: [{ name: "dns", port: 53, protocol: "UDP" }],
  }),
  service("default", "ext", { externalName: "www.example.org" }),
  service("web", "db", { headless: true, ports: [{ name: "mysql", port: 3306 }] }),
  endpointSlice(
    "web",
    "db",
    "db-1",
    [
      { ip: "10.244.1.1", hostname: "db-0" },
      { ip: "10.244.1.2", hostname: "db-1" },
      { ip: "10.244.1.3", hostname: "db-2", ready: false },
    ],
    { ports: [{ name: "mysql", port: 3306 }] },
  ),
  service("web", "pool", { headless: true, ports: [80] }),
  endpointSlice("web", "pool", "pool-1", ["10.244.2.1", "10.244.2.2", "10.244.2.3"], {
    ports: [{ port: 80 }],
  }),
  service("web", "empty", { headless: true }),
];

export const laneNames = [
  "nginx.default.svc.cluster.local",
  "dual.default.svc.cluster.local",
  "ext.default.svc.cluster.local",
  "db.web.svc.cluster.local",
  "db-0.db.web.svc.cluster.local",
  "db-2.db.web.svc.cluster.local",
  "pool.web.svc.cluster.local",
  "empty.web.svc.cluster.local",
  "_http._tcp.nginx.default.svc.cluster.local",
  "_mysql._tcp.db.web.svc.cluster.local",
  "_dns._udp.dual.default.svc.cluster.local",
  "_tcp.nginx.default.svc.cluster.local",
  "10-244-0-5.default.pod.cluster.local",
  "default.svc.cluster.local",
  "nothere.default.svc.cluster.local",
  "api.github.com.default.svc.cluster.local",
  "nosuchns.svc.cluster.local",
  "svc.cluster.local",
  "cluster.local",
  "dns-version.cluster.local",
  "ns.dns.cluster.local",
  "20.0.96.10.in-addr.arpa",
  "1.1.244.10.in-addr.arpa",
];

export const laneTypes = [
  Type.A,
  Type.AAAA,
  Type.SRV,
  Type.TXT,
  Type.NS,
  Type.SOA,
  Type.PTR,
  Type.CNAME,
  Type.ANY,
  Type.MX,
];

/** The client the questions come from (a pod's address). */
export const lanePeer = {
  proto: "udp" as const,
  remoteAddress: "10.0.0.9",
  remotePort: 5353,
  localAddress: "",
  localPort: 53,
};
