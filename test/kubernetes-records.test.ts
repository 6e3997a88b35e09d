// The kubernetes plugin's answers through real sockets. clusterdns processes list and watch a fixture
// cluster on the test API server (over HTTP, and over TLS with a client certificate), and dig asks them
// (dns2 too, for a few rows). Each row is one query with its exact rcode and sections; a negative answer
// must carry its zone's SOA in the authority section and nothing else.
//
// Two processes keep this fast: "main" serves cluster.local and the reverse zones with the default
// options; "options" has one server block per option set, each under its own zone (endpoint.test,
// ttl0.test, ...), so every option runs against the same cluster without a process of its own.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import dns2 from "dns2";
import type { Kind, KObject } from "../src/plugins/kubernetes/model/source.ts";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { endpointSlice, endpoints, namespace, pod, service } from "./k8s/objects.ts";
import { startFailure, startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { HAVE_OPENSSL, makeCerts } from "./k8s/certs.ts";

// ---------------------------------------------------------------------------------------------------
// The cluster

const labelled = { dns: "public" };

/** Every object of the fixture cluster, in the order the API server receives them. */
const CLUSTER: [Kind, KObject][] = [
  ["namespaces", namespace("default")],
  ["namespaces", namespace("kube-system")],
  ["namespaces", namespace("web")],
  ["namespaces", namespace("empty")],
  ["namespaces", namespace("team-a", { team: "a" })],
  ["namespaces", namespace("team-b", { team: "b" })],

  // Dual-stack kube-dns: the name server's addresses.
  [
    "services",
    service("kube-system", "kube-dns", {
      clusterIPs: ["10.96.0.10", "fd00::a"],
      labels: labelled,
      ports: [
        { name: "dns", port: 53, protocol: "UDP" },
        { name: "dns-tcp", port: 53, protocol: "TCP" },
      ],
    }),
  ],
  [
    "endpointslices",
    endpointSlice(
      "kube-system",
      "kube-dns",
      "kube-dns-a1",
      [{ ip: "10.244.0.5", pod: "coredns-5d78c9869d-x2x9z" }],
      {
        ports: [
          { name: "dns", port: 53, protocol: "UDP" },
          { name: "dns-tcp", port: 53 },
        ],
        labels: labelled,
      },
    ),
  ],
  [
    "services",
    service("default", "kubernetes", { clusterIP: "10.96.0.1", ports: [{ name: "https", port: 443 }] }),
  ],

  // A cluster IP service with a named and an unnamed port; a ready, a not-ready and a terminating endpoint.
  [
    "services",
    service("default", "web", {
      clusterIP: "10.96.0.20",
      labels: labelled,
      ports: [{ name: "http", port: 80, targetPort: 8080 }, 8443],
    }),
  ],
  [
    "endpointslices",
    endpointSlice(
      "default",
      "web",
      "web-b2",
      [
        { ip: "10.244.1.1", pod: "web-7d9f8b6c5-abcde", zone: "zone-a" },
        { ip: "10.244.1.2", pod: "web-7d9f8b6c5-fghij", ready: false, zone: "zone-a" },
        { ip: "10.244.1.3", pod: "web-7d9f8b6c5-klmno", terminating: true, serving: true, zone: "zone-b" },
      ],
      { ports: [{ name: "http", port: 8080 }, { port: 8443 }], labels: labelled },
    ),
  ],
  // The same pod behind a second, headless service: its address has two PTR records.
  ["services", service("default", "web-peers", { headless: true, selector: { app: "web" } })],
  ["endpointslices", endpointSlice("default", "web-peers", "web-peers-c3", ["10.244.1.1"])],
  [
    "services",
    service("default", "dual", {
      clusterIPs: ["10.96.0.30", "fd00::30"],
      ports: [
        { name: "http", port: 80 },
        { name: "dns", port: 53, protocol: "UDP" },
      ],
    }),
  ],
  ["services", service("default", "v6", { clusterIPs: ["fd00::40"], ports: [{ name: "http", port: 80 }] })],
  [
    "services",
    service("default", "np", {
      type: "NodePort",
      clusterIP: "10.96.0.60",
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  ["services", service("default", "idle", { clusterIP: "10.96.0.50", ports: [{ name: "http", port: 80 }] })],
  ["services", service("default", "ext", { externalName: "www.example.org" })],
  ["services", service("default", "alias", { externalName: "web.default.svc.cluster.local" })],
  ["services", service("default", "away", { externalName: "db.example.net" })],
  ["services", service("default", "gone", { externalName: "nope.default.svc.cluster.local" })],
  ["services", service("default", "digits", { externalName: "192.0.2.8" })],
  // ExternalNames in a loop, and one naming itself.
  ["services", service("default", "loop1", { externalName: "loop2.default.svc.cluster.local" })],
  ["services", service("default", "loop2", { externalName: "loop1.default.svc.cluster.local" })],
  ["services", service("default", "self", { externalName: "self.default.svc.cluster.local" })],

  // A StatefulSet's headless service: hostnames, two IPv4 slices and an IPv6 one, merged.
  ["services", service("web", "db", { headless: true, ports: [{ name: "mysql", port: 3306 }] })],
  [
    "endpointslices",
    endpointSlice(
      "web",
      "db",
      "db-v4a",
      [
        { ip: "10.244.2.1", hostname: "db-0", pod: "db-0" },
        { ip: "10.244.2.2", hostname: "db-1", pod: "db-1" },
        { ip: "10.244.2.3", hostname: "db-2", pod: "db-2", ready: false },
      ],
      { ports: [{ name: "mysql", port: 3306 }] },
    ),
  ],
  [
    "endpointslices",
    endpointSlice("web", "db", "db-v4b", [{ ip: "10.244.2.4", pod: "db-backup" }], {
      ports: [{ name: "mysql", port: 3306 }],
    }),
  ],
  [
    "endpointslices",
    endpointSlice("web", "db", "db-v6", [{ ip: "fd00::2:1", hostname: "db-0", pod: "db-0" }], {
      ports: [{ name: "mysql", port: 3306 }],
      addressType: "IPv6",
    }),
  ],
  // Headless without a ready endpoint.
  ["services", service("web", "lonely", { headless: true, ports: [{ name: "http", port: 80 }] })],
  [
    "endpointslices",
    endpointSlice("web", "lonely", "lonely-d4", [{ ip: "10.244.5.1", ready: false }], {
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  // Not-ready endpoints published: by the field, and by the annotation the spec names.
  [
    "services",
    service("web", "pnr", {
      headless: true,
      publishNotReadyAddresses: true,
      ports: [{ name: "peer", port: 7000 }],
    }),
  ],
  [
    "endpointslices",
    endpointSlice("web", "pnr", "pnr-e5", [{ ip: "10.244.3.1", hostname: "pnr-0", ready: false }], {
      ports: [{ name: "peer", port: 7000 }],
    }),
  ],
  ["services", tolerating(service("web", "tolerate", { headless: true }))],
  ["endpointslices", endpointSlice("web", "tolerate", "tolerate-f6", [{ ip: "10.244.3.2", ready: false }])],
  // A Deployment's headless service, dual-stack, endpoints named only by address (or by pod).
  ["services", service("web", "workers", { headless: true, ports: [{ name: "grpc", port: 9000 }] })],
  [
    "endpointslices",
    endpointSlice(
      "web",
      "workers",
      "workers-v4",
      [
        { ip: "10.244.4.1", pod: "workers-7c9-abcde", zone: "zone-a", hints: ["zone-a"] },
        { ip: "10.244.4.2", pod: "workers-7c9-fghij", zone: "zone-b", hints: ["zone-b"] },
      ],
      { ports: [{ name: "grpc", port: 9000 }] },
    ),
  ],
  [
    "endpointslices",
    endpointSlice(
      "web",
      "workers",
      "workers-v6",
      [{ ip: "fd00::4:1", pod: "workers-7c9-abcde", zone: "zone-a" }],
      { ports: [{ name: "grpc", port: 9000 }], addressType: "IPv6" },
    ),
  ],

  ["services", service("team-a", "app", { clusterIP: "10.96.1.1" })],
  ["services", service("team-b", "app", { clusterIP: "10.96.2.1" })],

  ["pods", pod("default", "client", "10.244.9.9", { ips: ["10.244.9.9", "fd00::9:9"] })],
  ["pods", pod("default", "job-done", "10.244.9.10", { phase: "Succeeded" })],
  ["pods", pod("web", "db-0", "10.244.2.1", { hostname: "db-0", subdomain: "db" })],
];

function tolerating<T extends KObject>(o: T): T {
  (o.metadata as { annotations?: Record<string, string> }).annotations = {
    "service.alpha.kubernetes.io/tolerate-unready-endpoints": "true",
  };
  return o;
}

/** The same services on a cluster that serves no EndpointSlices: Endpoints objects instead. */
const LEGACY_CLUSTER: [Kind, KObject][] = [
  ...CLUSTER.filter(([k]) => k === "namespaces" || k === "services"),
  [
    "endpoints",
    endpoints("web", "db", [
      {
        addresses: [
          { ip: "10.244.2.1", hostname: "db-0" },
          { ip: "10.244.2.2", hostname: "db-1" },
        ],
        notReadyAddresses: [{ ip: "10.244.2.3", hostname: "db-2" }],
        ports: [{ name: "mysql", port: 3306 }],
      },
    ]),
  ],
  [
    "endpoints",
    endpoints("web", "pnr", [{ notReadyAddresses: [{ ip: "10.244.3.1", hostname: "pnr-0" }], ports: [] }]),
  ],
  ["endpoints", endpoints("web", "tolerate", [{ notReadyAddresses: ["10.244.3.2"] }])],
  [
    "endpoints",
    endpoints("default", "web", [
      { addresses: ["10.244.1.1"], notReadyAddresses: ["10.244.1.2"], ports: [{ name: "http", port: 8080 }] },
    ]),
  ],
];

function populate(api: TestApiServer, objects: [Kind, KObject][]): void {
  for (const [kind, obj] of objects) api.create(kind, structuredClone(obj));
}

// ---------------------------------------------------------------------------------------------------
// Rows

interface Row {
  q: string;
  type: string;
  rcode: "NOERROR" | "NXDOMAIN" | "SERVFAIL";
  /** Records as dig prints them; an owner of "@" stands for the query name. */
  answer: string[];
  /** The zone's SOA for a negative answer, nothing for a positive one, unless given. */
  authority?: string[];
  additional: string[];
  /** More dig options ("+tcp"). */
  opts?: string[];
}

const ok = (q: string, type: string, answer: string[], additional: string[] = []): Row => ({
  q,
  type,
  rcode: "NOERROR",
  answer,
  additional,
});
const nodata = (q: string, type: string, authority?: string[]): Row => ({
  q,
  type,
  rcode: "NOERROR",
  answer: [],
  additional: [],
  authority,
});
const nx = (q: string, type = "A", authority?: string[]): Row => ({
  q,
  type,
  rcode: "NXDOMAIN",
  answer: [],
  additional: [],
  authority,
});
const servfail = (q: string, type = "A"): Row => ({ q, type, rcode: "SERVFAIL", answer: [], additional: [] });
const ptr = (ip: string, targets: string[]): Row =>
  ok(
    rev(ip),
    "PTR",
    targets.map((t) => `@ 5 IN PTR ${t}`),
  );

/** The SOA clusterdns gives a zone (CoreDNS's fields, its record TTL capped at 300); the serial is
 * checked apart, as SERIAL. */
function soa(zone: string, ttl = 5): string {
  const own = Math.min(ttl, 300);
  return `${zone}. ${own} IN SOA ns.dns.${zone}. hostmaster.${zone}. SERIAL 7200 1800 86400 ${ttl}`;
}

/** The reverse name of an address, spelled out here rather than taken from the code under test. */
function rev(ip: string): string {
  if (!ip.includes(":")) return `${ip.split(".").reverse().join(".")}.in-addr.arpa`;
  const [head, tail] = ip.split("::");
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  const nibbles = groups.map((g) => g.padStart(4, "0")).join("");
  return `${[...nibbles].reverse().join(".")}.ip6.arpa`;
}

const MAIN: Row[] = [
  // Spec 2.3.1: a service with a cluster IP has an A (AAAA) record per cluster IP of that family.
  ok("web.default.svc.cluster.local", "A", ["@ 5 IN A 10.96.0.20"]),
  nodata("web.default.svc.cluster.local", "AAAA"),
  ok("dual.default.svc.cluster.local", "A", ["@ 5 IN A 10.96.0.30"]),
  ok("dual.default.svc.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::30"]),
  nodata("v6.default.svc.cluster.local", "A"),
  ok("v6.default.svc.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::40"]),
  ok("kubernetes.default.svc.cluster.local", "A", ["@ 5 IN A 10.96.0.1"]),
  ok("idle.default.svc.cluster.local", "A", ["@ 5 IN A 10.96.0.50"]),
  ok("np.default.svc.cluster.local", "A", ["@ 5 IN A 10.96.0.60"]),
  nodata("web.default.svc.cluster.local", "TXT"),
  // SRV at the service's own name: every port, named or not (CoreDNS matches an empty port and
  // protocol against all).
  ok(
    "web.default.svc.cluster.local",
    "SRV",
    [
      "@ 5 IN SRV 0 50 80 web.default.svc.cluster.local.",
      "@ 5 IN SRV 0 50 8443 web.default.svc.cluster.local.",
    ],
    ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  ),
  ok(
    "db.web.svc.cluster.local",
    "SRV",
    [
      "@ 5 IN SRV 0 25 3306 db-0.db.web.svc.cluster.local.",
      "@ 5 IN SRV 0 25 3306 db-1.db.web.svc.cluster.local.",
      "@ 5 IN SRV 0 25 3306 10-244-2-4.db.web.svc.cluster.local.",
    ],
    [
      "db-0.db.web.svc.cluster.local. 5 IN A 10.244.2.1",
      "db-0.db.web.svc.cluster.local. 5 IN AAAA fd00::2:1",
      "db-1.db.web.svc.cluster.local. 5 IN A 10.244.2.2",
      "10-244-2-4.db.web.svc.cluster.local. 5 IN A 10.244.2.4",
    ],
  ),
  nodata("tolerate.web.svc.cluster.local", "SRV"),
  nx("lonely.web.svc.cluster.local", "SRV"),
  // SRV targets and the names in the additional section keep the client's spelling of the zone, as in
  // CoreDNS's preserve-case cases. (Asked in one spelling only: the answer cache replays the spelling
  // that filled it, as CoreDNS's cache does.)
  ok(
    "_http._tcp.np.default.svc.Cluster.LOCAL",
    "SRV",
    ["@ 5 IN SRV 0 100 80 np.default.svc.Cluster.LOCAL."],
    ["np.default.svc.Cluster.LOCAL. 5 IN A 10.96.0.60"],
  ),
  // CoreDNS's handler_case_test.go row: the additional record is owned by the SRV target's name
  // exactly, not by the question's spelling of the service part.
  ok(
    "_HtTp._TcP.nP.DeFaUlT.SvC.cLuStEr.LoCaL",
    "SRV",
    ["@ 5 IN SRV 0 100 80 np.default.svc.cLuStEr.LoCaL."],
    ["np.default.svc.cLuStEr.LoCaL. 5 IN A 10.96.0.60"],
  ),
  ok(
    "Cluster.Local",
    "NS",
    ["@ 5 IN NS ns.dns.Cluster.Local."],
    ["ns.dns.Cluster.Local. 5 IN A 10.96.0.10", "ns.dns.Cluster.Local. 5 IN AAAA fd00::a"],
  ),
  // Zonal names (CoreDNS PR 8388) are off without `zonal`, as in CoreDNS: NXDOMAIN.
  nx("zone-a.pin._zone.workers.web.svc.cluster.local"),
  nx("zone-a.prefer._zone.workers.web.svc.cluster.local"),
  nx("pin._zone.workers.web.svc.cluster.local"),
  // Comparisons are case-insensitive; the answer keeps the client's spelling. Over TCP too.
  ok("WEB.Default.SVC.cluster.LOCAL", "A", ["@ 5 IN A 10.96.0.20"]),
  { ...ok("web.default.svc.cluster.local", "A", ["@ 5 IN A 10.96.0.20"]), opts: ["+tcp"] },
  { ...nx("nosuch.default.svc.cluster.local"), opts: ["+tcp"] },
  // Endpoint names of a cluster IP service: ready endpoints only, by address.
  ok("10-244-1-1.web.default.svc.cluster.local", "A", ["@ 5 IN A 10.244.1.1"]),
  nodata("10-244-1-1.web.default.svc.cluster.local", "AAAA"),
  nx("10-244-1-2.web.default.svc.cluster.local"),
  nx("10-244-1-3.web.default.svc.cluster.local"),
  nx("web-7d9f8b6c5-abcde.web.default.svc.cluster.local"),
  // Spec 2.3.2: SRV per named port to the service's name, with the service's port; its addresses in
  // the additional section. Unnamed ports have none.
  ok(
    "_http._tcp.web.default.svc.cluster.local",
    "SRV",
    ["@ 5 IN SRV 0 100 80 web.default.svc.cluster.local."],
    ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  ),
  ok(
    "_dns._udp.dual.default.svc.cluster.local",
    "SRV",
    // Each address counts for the weight (CoreDNS's plugin/backend_lookup.go): two, one record.
    ["@ 5 IN SRV 0 50 53 dual.default.svc.cluster.local."],
    [
      "dual.default.svc.cluster.local. 5 IN A 10.96.0.30",
      "dual.default.svc.cluster.local. 5 IN AAAA fd00::30",
    ],
  ),
  ok(
    "_dns-tcp._tcp.kube-dns.kube-system.svc.cluster.local",
    "SRV",
    ["@ 5 IN SRV 0 50 53 kube-dns.kube-system.svc.cluster.local."],
    [
      "kube-dns.kube-system.svc.cluster.local. 5 IN A 10.96.0.10",
      "kube-dns.kube-system.svc.cluster.local. 5 IN AAAA fd00::a",
    ],
  ),
  nodata("_http._tcp.web.default.svc.cluster.local", "A"),
  nx("_http._udp.web.default.svc.cluster.local", "SRV"),
  nx("_https._tcp.web.default.svc.cluster.local", "SRV"),
  nodata("_tcp.web.default.svc.cluster.local", "SRV"),
  nx("_udp.web.default.svc.cluster.local", "SRV"),
  nodata("_udp.dual.default.svc.cluster.local", "SRV"),
  nx("_a._http._tcp.web.default.svc.cluster.local", "SRV"),
  // Spec 2.4.1: a headless service has a record per ready endpoint address, merged over its slices,
  // and each endpoint a record under its hostname (or, without one, its dashed address).
  ok("db.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.2.1", "@ 5 IN A 10.244.2.2", "@ 5 IN A 10.244.2.4"]),
  ok("db.web.svc.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::2:1"]),
  ok("db-0.db.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.2.1"]),
  ok("db-0.db.web.svc.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::2:1"]),
  ok("DB-0.Db.Web.svc.cluster.local", "A", ["@ 5 IN A 10.244.2.1"]),
  ok("db-1.db.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.2.2"]),
  nodata("db-1.db.web.svc.cluster.local", "AAAA"),
  nx("db-2.db.web.svc.cluster.local"),
  ok("10-244-2-4.db.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.2.4"]),
  nx("10-244-2-1.db.web.svc.cluster.local"),
  nx("a.db-0.db.web.svc.cluster.local"),
  ok("workers.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.4.1", "@ 5 IN A 10.244.4.2"]),
  ok("workers.web.svc.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::4:1"]),
  ok("fd00--4-1.workers.web.svc.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::4:1"]),
  nx("workers-7c9-abcde.workers.web.svc.cluster.local"),
  ok("web-peers.default.svc.cluster.local", "A", ["@ 5 IN A 10.244.1.1"]),
  // Spec 2.4.2: SRV per ready endpoint and named port, to the endpoint's name, its addresses additional.
  ok(
    "_mysql._tcp.db.web.svc.cluster.local",
    "SRV",
    [
      "@ 5 IN SRV 0 25 3306 db-0.db.web.svc.cluster.local.",
      "@ 5 IN SRV 0 25 3306 db-1.db.web.svc.cluster.local.",
      "@ 5 IN SRV 0 25 3306 10-244-2-4.db.web.svc.cluster.local.",
    ],
    [
      "db-0.db.web.svc.cluster.local. 5 IN A 10.244.2.1",
      "db-0.db.web.svc.cluster.local. 5 IN AAAA fd00::2:1",
      "db-1.db.web.svc.cluster.local. 5 IN A 10.244.2.2",
      "10-244-2-4.db.web.svc.cluster.local. 5 IN A 10.244.2.4",
    ],
  ),
  ok(
    "_grpc._tcp.workers.web.svc.cluster.local",
    "SRV",
    [
      "@ 5 IN SRV 0 33 9000 10-244-4-1.workers.web.svc.cluster.local.",
      "@ 5 IN SRV 0 33 9000 10-244-4-2.workers.web.svc.cluster.local.",
      "@ 5 IN SRV 0 33 9000 fd00--4-1.workers.web.svc.cluster.local.",
    ],
    [
      "10-244-4-1.workers.web.svc.cluster.local. 5 IN A 10.244.4.1",
      "10-244-4-2.workers.web.svc.cluster.local. 5 IN A 10.244.4.2",
      "fd00--4-1.workers.web.svc.cluster.local. 5 IN AAAA fd00::4:1",
    ],
  ),
  nodata("_tcp.db.web.svc.cluster.local", "SRV"),
  // Spec 2.4.1: a headless service without a ready endpoint is NXDOMAIN, and so is every name below it.
  nx("lonely.web.svc.cluster.local"),
  nx("lonely.web.svc.cluster.local", "AAAA"),
  nx("_http._tcp.lonely.web.svc.cluster.local", "SRV"),
  nx("_tcp.lonely.web.svc.cluster.local", "SRV"),
  nx("10-244-5-1.lonely.web.svc.cluster.local"),
  // Not-ready endpoints, published by publishNotReadyAddresses and by the spec's annotation.
  ok("pnr.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.3.1"]),
  ok("pnr-0.pnr.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.3.1"]),
  ok(
    "_peer._tcp.pnr.web.svc.cluster.local",
    "SRV",
    ["@ 5 IN SRV 0 100 7000 pnr-0.pnr.web.svc.cluster.local."],
    ["pnr-0.pnr.web.svc.cluster.local. 5 IN A 10.244.3.1"],
  ),
  ok("tolerate.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.3.2"]),
  ok("10-244-3-2.tolerate.web.svc.cluster.local", "A", ["@ 5 IN A 10.244.3.2"]),
  // Spec 2.5: ExternalName is a CNAME; the target's records follow when the server answers them.
  ok("ext.default.svc.cluster.local", "A", [
    "@ 5 IN CNAME www.example.org.",
    "www.example.org. 3600 IN A 192.0.2.80",
  ]),
  ok("ext.default.svc.cluster.local", "AAAA", ["@ 5 IN CNAME www.example.org."]),
  ok("ext.default.svc.cluster.local", "CNAME", ["@ 5 IN CNAME www.example.org."]),
  ok("alias.default.svc.cluster.local", "A", [
    "@ 5 IN CNAME web.default.svc.cluster.local.",
    "web.default.svc.cluster.local. 5 IN A 10.96.0.20",
  ]),
  ok("away.default.svc.cluster.local", "A", ["@ 5 IN CNAME db.example.net."]),
  // A chain the server follows in its own zones ends as the target does (RFC 6604: NXDOMAIN for a
  // target that does not exist; RFC 2308: the target zone's SOA with the denial), as the file plugin
  // and Knot answer a CNAME in a zone.
  {
    ...nx("gone.default.svc.cluster.local", "A", [soa("cluster.local")]),
    answer: ["@ 5 IN CNAME nope.default.svc.cluster.local."],
  },
  // The API takes an ExternalName that looks like an IPv4 address as a name of digits, which
  // "DNS servers do not resolve" (Kubernetes' Service docs): CoreDNS publishes nothing for it.
  nx("digits.default.svc.cluster.local"),
  nx("digits.default.svc.cluster.local", "CNAME"),
  {
    ...nodata("alias.default.svc.cluster.local", "AAAA", [soa("cluster.local")]),
    answer: ["@ 5 IN CNAME web.default.svc.cluster.local."],
  },
  // A loop: the chain up to its first repeat, each CNAME once (RFC 2181 section 5).
  ok("loop1.default.svc.cluster.local", "A", [
    "@ 5 IN CNAME loop2.default.svc.cluster.local.",
    "loop2.default.svc.cluster.local. 5 IN CNAME loop1.default.svc.cluster.local.",
  ]),
  ok("self.default.svc.cluster.local", "A", ["@ 5 IN CNAME self.default.svc.cluster.local."]),
  nx("_http._tcp.ext.default.svc.cluster.local", "SRV"),
  nx("www.ext.default.svc.cluster.local"),
  // Names that exist without records are NODATA, never NXDOMAIN (RFC 8020): namespaces, svc, the
  // name server's parent. Everything the schema does not define is NXDOMAIN.
  nodata("default.svc.cluster.local", "A"),
  nodata("empty.svc.cluster.local", "A"),
  nodata("svc.cluster.local", "A"),
  nodata("svc.cluster.local", "SRV"),
  nodata("dns.cluster.local", "A"),
  nx("nosuch.svc.cluster.local"),
  nx("web.empty.svc.cluster.local"),
  nx("web.nosuch.svc.cluster.local"),
  nx("*.default.svc.cluster.local"),
  nx("nothing.cluster.local"),
  nx("web.default.cluster.local"),
  // Pod names are off by default. pod.<zone> stays NODATA, as in CoreDNS (its parser answers NODATA for
  // svc.<zone> and pod.<zone> whatever the pod mode).
  nodata("pod.cluster.local", "A"),
  nx("default.pod.cluster.local"),
  nx("10-244-9-9.default.pod.cluster.local"),
  // The apex: SOA, NS naming ns.dns.<zone>, whose addresses are kube-dns's cluster IPs.
  ok("cluster.local", "SOA", [soa("cluster.local")]),
  ok(
    "cluster.local",
    "NS",
    ["@ 5 IN NS ns.dns.cluster.local."],
    ["ns.dns.cluster.local. 5 IN A 10.96.0.10", "ns.dns.cluster.local. 5 IN AAAA fd00::a"],
  ),
  nodata("cluster.local", "A"),
  ok("ns.dns.cluster.local", "A", ["@ 5 IN A 10.96.0.10"]),
  ok("ns.dns.cluster.local", "AAAA", ["@ 5 IN AAAA fd00::a"]),
  // Spec 2.2: the schema version.
  ok("dns-version.cluster.local", "TXT", ['@ 28800 IN TXT "1.1.0"']),
  nodata("dns-version.cluster.local", "A"),
  // Spec 2.3.3 and 2.4.3: PTR for cluster IPs and ready endpoint addresses, in both reverse trees.
  ptr("10.96.0.20", ["web.default.svc.cluster.local."]),
  ptr("10.96.0.10", ["kube-dns.kube-system.svc.cluster.local."]),
  ptr("fd00::a", ["kube-dns.kube-system.svc.cluster.local."]),
  ptr("fd00::30", ["dual.default.svc.cluster.local."]),
  ptr("fd00::40", ["v6.default.svc.cluster.local."]),
  ptr("10.96.1.1", ["app.team-a.svc.cluster.local."]),
  ptr("10.244.1.1", [
    "10-244-1-1.web.default.svc.cluster.local.",
    "10-244-1-1.web-peers.default.svc.cluster.local.",
  ]),
  ptr("10.244.2.1", ["db-0.db.web.svc.cluster.local."]),
  ptr("fd00::2:1", ["db-0.db.web.svc.cluster.local."]),
  ptr("10.244.2.4", ["10-244-2-4.db.web.svc.cluster.local."]),
  ptr("fd00::4:1", ["fd00--4-1.workers.web.svc.cluster.local."]),
  ptr("10.244.3.1", ["pnr-0.pnr.web.svc.cluster.local."]),
  nx(rev("10.244.1.2"), "PTR"),
  nx(rev("10.244.1.3"), "PTR"),
  nx(rev("10.244.2.3"), "PTR"),
  nx(rev("10.244.5.1"), "PTR"),
  nx(rev("10.244.9.9"), "PTR"),
  nx(rev("192.0.2.1"), "PTR"),
  nx(rev("fd00::99"), "PTR"),
  nodata(rev("10.96.0.20"), "A"),
  nodata("244.10.in-addr.arpa", "PTR"),
  nodata("10.in-addr.arpa", "PTR"),
  nodata("d.f.ip6.arpa", "PTR"),
  nx("2.0.192.in-addr.arpa", "PTR"),
  // A reverse zone's SOA names ns.dns in that zone, as CoreDNS's does; its NS the primary zone's.
  ok("in-addr.arpa", "SOA", [soa("in-addr.arpa")]),
  ok(
    "ip6.arpa",
    "NS",
    ["@ 5 IN NS ns.dns.cluster.local."],
    ["ns.dns.cluster.local. 5 IN A 10.96.0.10", "ns.dns.cluster.local. 5 IN AAAA fd00::a"],
  ),
];

/** What each option set's block needs from the test's environment. */
interface Env {
  api: TestApiServer;
  kubeconfig: string;
  /** A kubeconfig whose current context is dead and whose "live" context reaches `api`. */
  contexts: string;
  /** A kubeconfig of the API server without EndpointSlices. */
  legacy: string;
  tls?: { url: string; cert: string; key: string; ca: string };
}

interface OptionSet {
  title: string;
  /** The server block's zones; the first is the plugin's forward zone. */
  zones: string[];
  /** The server block's keys when they are not `zones`. */
  blockZones?: string[];
  /** Lines of the kubernetes block; without a connection option, `kubeconfig` to the test API server. */
  options: (e: Env) => string[];
  /** Lines after the kubernetes block: a plugin to catch what falls through. */
  after?: string[];
  ttl?: number;
  skip?: string | false;
  rows: Row[];
}

const FILE_SOA_FT = "ftall.test. 60 IN SOA ns.file.ftall.test. hostmaster.ftall.test. 1 7200 1800 86400 60";
const FILE_SOA_ARPA =
  "in-addr.arpa. 60 IN SOA ns.file.ftzones.test. hostmaster.ftzones.test. 1 7200 1800 86400 60";

/** Zone files for the blocks that catch what falls through. */
const ZONE_FILES: Record<string, string> = {
  "db.ftall.test": [
    "$ORIGIN ftall.test.",
    "@ 3600 IN SOA ns.file.ftall.test. hostmaster.ftall.test. 1 7200 1800 86400 60",
    "@ 3600 IN NS ns.file.ftall.test.",
    "extra 3600 IN A 192.0.2.99",
    "nope.default.svc 3600 IN A 192.0.2.98",
    "",
  ].join("\n"),
  "db.198.51.9": [
    "$ORIGIN 9.51.198.in-addr.arpa.",
    "@ 3600 IN SOA ns.file.unsynced.test. hostmaster.unsynced.test. 1 7200 1800 86400 60",
    "@ 3600 IN NS ns.file.unsynced.test.",
    "1 3600 IN PTR outside.example.",
    "",
  ].join("\n"),
  "db.in-addr.arpa": [
    "$ORIGIN in-addr.arpa.",
    "@ 3600 IN SOA ns.file.ftzones.test. hostmaster.ftzones.test. 1 7200 1800 86400 60",
    "@ 3600 IN NS ns.file.ftzones.test.",
    "1.2.0.192 3600 IN PTR fallback.example.",
    "",
  ].join("\n"),
  "db.198.51.100": [
    "$ORIGIN 100.51.198.in-addr.arpa.",
    "@ 3600 IN SOA ns.file.ftcidr.test. hostmaster.ftcidr.test. 1 7200 1800 86400 60",
    "@ 3600 IN NS ns.file.ftcidr.test.",
    "1 3600 IN PTR fallback.example.",
    "",
  ].join("\n"),
};

const SETS: OptionSet[] = [
  {
    title: "endpoint URL (no kubeconfig)",
    zones: ["endpoint.test"],
    options: (e) => [`endpoint ${e.api.url}`],
    rows: [
      ok("web.default.svc.endpoint.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("db.web.svc.endpoint.test", "A", [
        "@ 5 IN A 10.244.2.1",
        "@ 5 IN A 10.244.2.2",
        "@ 5 IN A 10.244.2.4",
      ]),
      nx("nosuch.default.svc.endpoint.test"),
      // This process runs as if in pod 10.244.1.1 (POD_IP): behind web (a cluster IP) and web-peers
      // (headless), so those are the name server's addresses, as CoreDNS finds them.
      ok("ns.dns.endpoint.test", "A", ["@ 5 IN A 10.96.0.20", "@ 5 IN A 10.244.1.1"]),
      ok(
        "endpoint.test",
        "NS",
        ["@ 5 IN NS ns.dns.endpoint.test."],
        ["ns.dns.endpoint.test. 5 IN A 10.96.0.20", "ns.dns.endpoint.test. 5 IN A 10.244.1.1"],
      ),
    ],
  },
  {
    // CoreDNS takes several (deprecated since 1.5): it warns and uses the first, which answers here.
    title: "endpoint with two URLs: the first is used",
    zones: ["endpoints.test"],
    options: (e) => [`endpoint ${e.api.url} http://127.0.0.1:1`],
    rows: [
      ok("web.default.svc.endpoints.test", "A", ["@ 5 IN A 10.96.0.20"]),
      nx("nosuch.default.svc.endpoints.test"),
    ],
  },
  {
    // CoreDNS: "This option is ignored if kubeconfig is set": the kubeconfig's API answers.
    title: "kubeconfig beside endpoint: the kubeconfig is used",
    zones: ["kcfirst.test"],
    options: (e) => [`kubeconfig ${e.kubeconfig}`, "endpoint http://127.0.0.1:1"],
    rows: [ok("web.default.svc.kcfirst.test", "A", ["@ 5 IN A 10.96.0.20"])],
  },
  {
    title: "endpoint https URL with tls CERT KEY CACERT",
    zones: ["tls.test"],
    skip: !HAVE_OPENSSL && "openssl not installed",
    options: (e) => [`endpoint ${e.tls!.url}`, `tls ${e.tls!.cert} ${e.tls!.key} ${e.tls!.ca}`],
    rows: [
      ok("web.default.svc.tls.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("db-0.db.web.svc.tls.test", "AAAA", ["@ 5 IN AAAA fd00::2:1"]),
      nx("nosuch.default.svc.tls.test"),
    ],
  },
  {
    title: "kubeconfig with a context",
    zones: ["context.test"],
    options: (e) => [`kubeconfig ${e.contexts} live`],
    rows: [
      ok("web.default.svc.context.test", "A", ["@ 5 IN A 10.96.0.20"]),
      nx("nosuch.default.svc.context.test"),
    ],
  },
  {
    title: "namespaces (repeated: the lists add up)",
    zones: ["namespaces.test"],
    options: () => ["namespaces default", "namespaces team-a"],
    rows: [
      ok("web.default.svc.namespaces.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("app.team-a.svc.namespaces.test", "A", ["@ 5 IN A 10.96.1.1"]),
      nx("app.team-b.svc.namespaces.test"),
      nx("db.web.svc.namespaces.test"),
      nodata("default.svc.namespaces.test", "A"),
      nodata("team-a.svc.namespaces.test", "A"),
      nx("team-b.svc.namespaces.test"),
      nx("web.svc.namespaces.test"),
    ],
  },
  {
    // Set-based requirements, as kubectl -l and the API take them.
    title: "labels, set-based",
    zones: ["setlabels.test"],
    options: () => ["labels dns in (public, internal), !legacy"],
    rows: [
      ok("web.default.svc.setlabels.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("10-244-1-1.web.default.svc.setlabels.test", "A", ["@ 5 IN A 10.244.1.1"]),
      nx("idle.default.svc.setlabels.test"),
      nx("db.web.svc.setlabels.test"),
    ],
  },
  {
    title: "labels",
    zones: ["labels.test"],
    options: () => ["labels dns=public"],
    rows: [
      ok("web.default.svc.labels.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("10-244-1-1.web.default.svc.labels.test", "A", ["@ 5 IN A 10.244.1.1"]),
      ok("kube-dns.kube-system.svc.labels.test", "AAAA", ["@ 5 IN AAAA fd00::a"]),
      nx("idle.default.svc.labels.test"),
      nx("web-peers.default.svc.labels.test"),
      nx("db.web.svc.labels.test"),
      nodata("default.svc.labels.test", "A"),
      ok("ns.dns.labels.test", "A", ["@ 5 IN A 10.96.0.20"]),
    ],
  },
  {
    title: "namespace_labels",
    zones: ["nslabels.test"],
    options: () => ["namespace_labels team in (a, c)"],
    rows: [
      ok("app.team-a.svc.nslabels.test", "A", ["@ 5 IN A 10.96.1.1"]),
      nx("app.team-b.svc.nslabels.test"),
      nx("web.default.svc.nslabels.test"),
      nodata("team-a.svc.nslabels.test", "A"),
      nx("team-b.svc.nslabels.test"),
      nx("default.svc.nslabels.test"),
    ],
  },
  {
    title: "pods insecure",
    zones: ["insecure.test"],
    options: () => ["pods insecure"],
    rows: [
      ok("1-2-3-4.default.pod.insecure.test", "A", ["@ 5 IN A 1.2.3.4"]),
      nodata("1-2-3-4.default.pod.insecure.test", "AAAA"),
      ok("fd00--9-9.default.pod.insecure.test", "AAAA", ["@ 5 IN AAAA fd00::9:9"]),
      ok("10-244-9-9.empty.pod.insecure.test", "A", ["@ 5 IN A 10.244.9.9"]),
      nx("1-2-3-4.nosuch.pod.insecure.test"),
      nx("1-2-3.default.pod.insecure.test"),
      nx("256-0-0-1.default.pod.insecure.test"),
      nx("a.1-2-3-4.default.pod.insecure.test"),
      nodata("default.pod.insecure.test", "A"),
      nodata("pod.insecure.test", "A"),
    ],
  },
  {
    title: "pods verified",
    zones: ["verified.test"],
    options: () => ["pods verified"],
    rows: [
      ok("10-244-9-9.default.pod.verified.test", "A", ["@ 5 IN A 10.244.9.9"]),
      nodata("10-244-9-9.default.pod.verified.test", "AAAA"),
      ok("fd00--9-9.default.pod.verified.test", "AAAA", ["@ 5 IN AAAA fd00::9:9"]),
      ok("10-244-2-1.web.pod.verified.test", "A", ["@ 5 IN A 10.244.2.1"]),
      nx("10-244-9-9.web.pod.verified.test"),
      nx("10-244-9-10.default.pod.verified.test"),
      nx("1-2-3-4.default.pod.verified.test"),
    ],
  },
  {
    title: "endpoint_pod_names",
    zones: ["podnames.test", "4.244.10.in-addr.arpa"],
    options: () => ["endpoint_pod_names"],
    rows: [
      ok("workers-7c9-abcde.workers.web.svc.podnames.test", "A", ["@ 5 IN A 10.244.4.1"]),
      ok("workers-7c9-abcde.workers.web.svc.podnames.test", "AAAA", ["@ 5 IN AAAA fd00::4:1"]),
      ok("workers-7c9-fghij.workers.web.svc.podnames.test", "A", ["@ 5 IN A 10.244.4.2"]),
      nx("10-244-4-1.workers.web.svc.podnames.test"),
      ok(
        "_grpc._tcp.workers.web.svc.podnames.test",
        "SRV",
        [
          "@ 5 IN SRV 0 33 9000 workers-7c9-abcde.workers.web.svc.podnames.test.",
          "@ 5 IN SRV 0 33 9000 workers-7c9-fghij.workers.web.svc.podnames.test.",
        ],
        [
          "workers-7c9-abcde.workers.web.svc.podnames.test. 5 IN A 10.244.4.1",
          "workers-7c9-abcde.workers.web.svc.podnames.test. 5 IN AAAA fd00::4:1",
          "workers-7c9-fghij.workers.web.svc.podnames.test. 5 IN A 10.244.4.2",
        ],
      ),
      // The hostname wins over the pod's name; an endpoint without a pod keeps its address.
      ok("db-0.db.web.svc.podnames.test", "A", ["@ 5 IN A 10.244.2.1"]),
      ok("db-backup.db.web.svc.podnames.test", "A", ["@ 5 IN A 10.244.2.4"]),
      nx("10-244-2-4.db.web.svc.podnames.test"),
      ok("10-244-3-2.tolerate.web.svc.podnames.test", "A", ["@ 5 IN A 10.244.3.2"]),
      ok("web-7d9f8b6c5-abcde.web.default.svc.podnames.test", "A", ["@ 5 IN A 10.244.1.1"]),
      ok(rev("10.244.4.1"), "PTR", ["@ 5 IN PTR workers-7c9-abcde.workers.web.svc.podnames.test."]),
      nx(rev("10.244.4.9"), "PTR"),
    ],
  },
  {
    // CoreDNS takes a CIDR among the plugin's ZONES as in a server block key: its reverse zones.
    title: "ZONES with CIDR prefixes",
    zones: ["cidr.test", "10.96.2.0/24", "fd00::/120", "10.96.0.60/32"],
    options: () => [],
    rows: [
      ok("app.team-b.svc.cidr.test", "A", ["@ 5 IN A 10.96.2.1"]),
      ok(rev("10.96.2.1"), "PTR", ["@ 5 IN PTR app.team-b.svc.cidr.test."]),
      ok(rev("fd00::30"), "PTR", ["@ 5 IN PTR dual.default.svc.cidr.test."]),
      // A prefix of one address is a zone whose apex is the address's name: its PTR is there too.
      ok(rev("10.96.0.60"), "PTR", ["@ 5 IN PTR np.default.svc.cidr.test."]),
    ],
  },
  {
    // A block of PTRs alone: the plugin needs a forward zone for their targets, which CoreDNS takes
    // outside the block (its queries go elsewhere, to another block or server).
    title: "a reverse block whose plugin names a forward zone outside it",
    zones: ["revonly.test", "1.244.10.in-addr.arpa"],
    blockZones: ["1.244.10.in-addr.arpa"],
    options: () => [],
    rows: [
      ptr("10.244.1.1", [
        "10-244-1-1.web.default.svc.revonly.test.",
        "10-244-1-1.web-peers.default.svc.revonly.test.",
      ]),
      nx(rev("10.244.1.2"), "PTR"),
    ],
  },
  {
    // CoreDNS PR 8388: ZONE.pin._zone.SERVICE holds a headless service's endpoints in ZONE (NODATA
    // when none is there), ZONE.prefer._zone.SERVICE those or every endpoint.
    title: "zonal",
    zones: ["zonal.test"],
    options: () => ["zonal"],
    rows: [
      ok("zone-a.pin._zone.workers.web.svc.zonal.test", "A", ["@ 5 IN A 10.244.4.1"]),
      ok("zone-a.pin._zone.workers.web.svc.zonal.test", "AAAA", ["@ 5 IN AAAA fd00::4:1"]),
      ok("zone-b.pin._zone.workers.web.svc.zonal.test", "A", ["@ 5 IN A 10.244.4.2"]),
      nodata("zone-b.pin._zone.workers.web.svc.zonal.test", "AAAA"),
      nodata("zone-c.pin._zone.workers.web.svc.zonal.test", "A"),
      ok("zone-c.prefer._zone.workers.web.svc.zonal.test", "A", [
        "@ 5 IN A 10.244.4.1",
        "@ 5 IN A 10.244.4.2",
      ]),
      ok(
        "zone-b.pin._zone.workers.web.svc.zonal.test",
        "SRV",
        ["@ 5 IN SRV 0 100 9000 10-244-4-2.workers.web.svc.zonal.test."],
        ["10-244-4-2.workers.web.svc.zonal.test. 5 IN A 10.244.4.2"],
      ),
      nodata("pin._zone.workers.web.svc.zonal.test", "A"),
      nodata("_zone.workers.web.svc.zonal.test", "A"),
      nx("zone-a.florp._zone.workers.web.svc.zonal.test"),
      // A headless service whose endpoints have no zone: NODATA, as for any zone with none there.
      nodata("zone-a.pin._zone.db.web.svc.zonal.test", "A"),
      // Headless services only; one without a ready endpoint does not exist, nor its names.
      nx("zone-a.pin._zone.web.default.svc.zonal.test"),
      nx("zone-a.pin._zone.lonely.web.svc.zonal.test"),
    ],
  },
  {
    title: "ttl 30",
    zones: ["ttl30.test"],
    options: () => ["ttl 30"],
    ttl: 30,
    rows: [
      ok("web.default.svc.ttl30.test", "A", ["@ 30 IN A 10.96.0.20"]),
      ok(
        "_http._tcp.web.default.svc.ttl30.test",
        "SRV",
        ["@ 30 IN SRV 0 100 80 web.default.svc.ttl30.test."],
        ["web.default.svc.ttl30.test. 30 IN A 10.96.0.20"],
      ),
      ok("dns-version.ttl30.test", "TXT", ['@ 28800 IN TXT "1.1.0"']),
      ok("ttl30.test", "SOA", [soa("ttl30.test", 30)]),
      nx("nosuch.default.svc.ttl30.test"),
      nodata("default.svc.ttl30.test", "A"),
    ],
  },
  {
    title: "ttl 3600: the SOA record's own TTL is capped at 300 (CoreDNS), its minimum is the TTL",
    zones: ["ttl3600.test"],
    options: () => ["ttl 3600"],
    ttl: 3600,
    rows: [
      ok("web.default.svc.ttl3600.test", "A", ["@ 3600 IN A 10.96.0.20"]),
      ok("ttl3600.test", "SOA", [soa("ttl3600.test", 3600)]),
      nx("nosuch.default.svc.ttl3600.test"),
    ],
  },
  {
    title: "before the first sync (an API that never answers): SERVFAIL with the SOA, fallthrough passes on",
    zones: ["unsynced.test", "9.51.198.in-addr.arpa"],
    options: () => ["endpoint http://127.0.0.1:1", "startup_timeout 1s", "fallthrough 9.51.198.in-addr.arpa"],
    after: ["file db.198.51.9 9.51.198.in-addr.arpa"],
    rows: [
      servfail("web.default.svc.unsynced.test"),
      servfail("unsynced.test", "NS"),
      servfail("nosuch.unsynced.test", "AAAA"),
      ok(rev("198.51.9.1"), "PTR", ["@ 3600 IN PTR outside.example."]),
    ],
  },
  {
    title: "ttl 0",
    zones: ["ttl0.test"],
    options: () => ["ttl 0"],
    ttl: 0,
    rows: [
      ok("web.default.svc.ttl0.test", "A", ["@ 0 IN A 10.96.0.20"]),
      ok("ttl0.test", "SOA", [soa("ttl0.test", 0)]),
      nx("nosuch.default.svc.ttl0.test"),
    ],
  },
  {
    title: "noendpoints",
    zones: ["noep.test", "2.244.10.in-addr.arpa", "0.96.10.in-addr.arpa"],
    options: () => ["noendpoints"],
    rows: [
      ok("web.default.svc.noep.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok(
        "_http._tcp.web.default.svc.noep.test",
        "SRV",
        ["@ 5 IN SRV 0 100 80 web.default.svc.noep.test."],
        ["web.default.svc.noep.test. 5 IN A 10.96.0.20"],
      ),
      nx("10-244-1-1.web.default.svc.noep.test"),
      nx("db.web.svc.noep.test"),
      nx("db-0.db.web.svc.noep.test"),
      nx("_mysql._tcp.db.web.svc.noep.test", "SRV"),
      nx("pnr.web.svc.noep.test"),
      ok(rev("10.96.0.20"), "PTR", ["@ 5 IN PTR web.default.svc.noep.test."]),
      nx(rev("10.244.2.1"), "PTR"),
    ],
  },
  {
    title: "ignore empty_service",
    zones: ["empty.test"],
    options: () => ["ignore empty_service"],
    rows: [
      ok("web.default.svc.empty.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("kube-dns.kube-system.svc.empty.test", "A", ["@ 5 IN A 10.96.0.10"]),
      nx("idle.default.svc.empty.test"),
      nx("idle.default.svc.empty.test", "AAAA"),
      nx("_http._tcp.idle.default.svc.empty.test", "SRV"),
      nx("kubernetes.default.svc.empty.test"),
      nx("dual.default.svc.empty.test", "AAAA"),
      ok("ext.default.svc.empty.test", "A", ["@ 5 IN CNAME www.example.org."]),
      nodata("default.svc.empty.test", "A"),
    ],
  },
  {
    title: "fallthrough (every zone), a file zone after",
    zones: ["ftall.test"],
    options: () => ["fallthrough"],
    after: ["file db.ftall.test"],
    rows: [
      ok("web.default.svc.ftall.test", "A", ["@ 5 IN A 10.96.0.20"]),
      ok("extra.ftall.test", "A", ["@ 3600 IN A 192.0.2.99"]),
      ok("nope.default.svc.ftall.test", "A", ["@ 3600 IN A 192.0.2.98"]),
      nodata("extra.ftall.test", "AAAA", [FILE_SOA_FT]),
      nx("missing.ftall.test", "A", [FILE_SOA_FT]),
      // Only NXDOMAIN falls through: NODATA stays the plugin's.
      nodata("default.svc.ftall.test", "A"),
      nodata("web.default.svc.ftall.test", "TXT"),
    ],
  },
  {
    title: "fallthrough ZONES (in-addr.arpa only)",
    zones: ["ftzones.test", "in-addr.arpa"],
    options: () => ["fallthrough in-addr.arpa"],
    after: ["file db.in-addr.arpa in-addr.arpa"],
    rows: [
      ok(rev("192.0.2.1"), "PTR", ["@ 3600 IN PTR fallback.example."]),
      nx(rev("192.0.2.2"), "PTR", [FILE_SOA_ARPA]),
      ok(rev("10.96.1.1"), "PTR", ["@ 5 IN PTR app.team-a.svc.ftzones.test."]),
      nx("missing.ftzones.test"),
      nx("nosuch.default.svc.ftzones.test"),
    ],
  },
  {
    // CoreDNS reads fallthrough's zones as any zone argument: a CIDR is its reverse zones.
    title: "fallthrough with a CIDR prefix",
    zones: ["ftcidr.test", "198.51.100.0/24"],
    options: () => ["fallthrough 198.51.100.0/24"],
    after: ["file db.198.51.100 100.51.198.in-addr.arpa"],
    rows: [
      ok(rev("198.51.100.1"), "PTR", ["@ 3600 IN PTR fallback.example."]),
      nx("nosuch.default.svc.ftcidr.test"),
    ],
  },
  {
    title: "an API without EndpointSlices: Endpoints",
    zones: ["legacy.test"],
    options: (e) => [`kubeconfig ${e.legacy}`],
    rows: [
      ok("db.web.svc.legacy.test", "A", ["@ 5 IN A 10.244.2.1", "@ 5 IN A 10.244.2.2"]),
      nodata("db.web.svc.legacy.test", "AAAA"),
      ok("db-0.db.web.svc.legacy.test", "A", ["@ 5 IN A 10.244.2.1"]),
      nx("db-2.db.web.svc.legacy.test"),
      ok(
        "_mysql._tcp.db.web.svc.legacy.test",
        "SRV",
        [
          "@ 5 IN SRV 0 50 3306 db-0.db.web.svc.legacy.test.",
          "@ 5 IN SRV 0 50 3306 db-1.db.web.svc.legacy.test.",
        ],
        ["db-0.db.web.svc.legacy.test. 5 IN A 10.244.2.1", "db-1.db.web.svc.legacy.test. 5 IN A 10.244.2.2"],
      ),
      ok("pnr.web.svc.legacy.test", "A", ["@ 5 IN A 10.244.3.1"]),
      ok("pnr-0.pnr.web.svc.legacy.test", "A", ["@ 5 IN A 10.244.3.1"]),
      ok("tolerate.web.svc.legacy.test", "A", ["@ 5 IN A 10.244.3.2"]),
      ok("10-244-1-1.web.default.svc.legacy.test", "A", ["@ 5 IN A 10.244.1.1"]),
      nx("10-244-1-2.web.default.svc.legacy.test"),
      nx("lonely.web.svc.legacy.test"),
    ],
  },
];

// ---------------------------------------------------------------------------------------------------
// Corefiles

function mainCorefile(e: Env): string {
  return `cluster.local in-addr.arpa ip6.arpa {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${e.kubeconfig}
    }
}
example.org {
    hosts {
        192.0.2.80 www.example.org
        reload 0
    }
}
`;
}

const CONNECTION = /^(endpoint|kubeconfig) /;

function optionsCorefile(e: Env): string {
  const blocks: string[] = [];
  for (const set of SETS) {
    if (set.skip) continue;
    const options = set.options(e);
    if (!options.some((o) => CONNECTION.test(o))) options.unshift(`kubeconfig ${e.kubeconfig}`);
    const zones = set.zones.join(" ");
    const lines = [
      `${(set.blockZones ?? set.zones).join(" ")} {`,
      `    kubernetes ${zones} {`,
      ...options.map((o) => `        ${o}`),
      "    }",
      ...(set.after ?? []).map((a) => `    ${a}`),
      "}",
    ];
    blocks.push(lines.join("\n"));
  }
  return blocks.join("\n") + "\n";
}

// ---------------------------------------------------------------------------------------------------
// Checking

/** The zone a name's negative answer names: the longest of `zones` that holds it. */
function zoneOf(q: string, zones: readonly string[]): string {
  const name = q.toLowerCase();
  const found = zones.filter((z) => name === z || name.endsWith(`.${z}`)).sort((a, b) => b.length - a.length);
  assert.ok(found.length > 0, `${q} is in one of ${zones.join(", ")}`);
  return found[0];
}

let startSec = 0;

/** Replaces the serial of clusterdns's SOA records by SERIAL, after checking it is the time of a change
 * made while this test ran. Other SOAs (of a zone file) stay as they are. */
function normalize(line: string): string {
  const f = line.split(" ");
  if (f[3] !== "SOA" || !f[4].startsWith("ns.dns.")) return line;
  const serial = Number(f[6]);
  assert.ok(
    serial >= startSec && serial <= Date.now() / 1000 + 1,
    `SOA serial ${serial} is a time of this run`,
  );
  f[6] = "SERIAL";
  return f.join(" ");
}

interface Sections {
  rcode: string;
  aa: boolean;
  answer: string[];
  authority: string[];
  additional: string[];
}

function expected(row: Row, zones: readonly string[], ttl: number): Omit<Sections, "aa"> {
  const owner = (l: string) => (l.startsWith("@ ") ? `${row.q}.${l.slice(1)}` : l);
  const negative = row.answer.length === 0;
  return {
    rcode: row.rcode,
    answer: row.answer.map(owner).sort(),
    authority: (row.authority ?? (negative ? [soa(zoneOf(row.q, zones), ttl)] : [])).sort(),
    additional: row.additional.map(owner).sort(),
  };
}

function check(got: Sections, row: Row, zones: readonly string[], ttl: number, text = ""): void {
  assert.ok(got.aa, `authoritative\n${text}`);
  const norm = (lines: string[]) => lines.map(normalize).sort();
  assert.deepEqual(
    {
      rcode: got.rcode,
      answer: norm(got.answer),
      authority: norm(got.authority),
      additional: norm(got.additional),
    },
    expected(row, zones, ttl),
    text,
  );
}

function rowTitle(r: Row): string {
  return `${r.q} ${r.type}${r.opts ? ` ${r.opts.join(" ")}` : ""}: ${r.rcode}${r.rcode === "NOERROR" && r.answer.length === 0 ? " (NODATA)" : ""}`;
}

async function digRow(port: number, row: Row): Promise<Sections & { text: string }> {
  const r = await dig(port, row.q, row.type, ...(row.opts ?? []));
  return { ...r, rcode: r.status, aa: r.flags.includes("aa") };
}

// dns2: an independent client and decoder, for a few rows.
const TYPE_NAMES = new Map(
  Object.entries(dns2.Packet.TYPE as Record<string, number>).map(([k, v]) => [v, k]),
);
const RCODES: Record<number, string> = { 0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED" };

interface Dns2Record {
  name: string;
  type: number;
  ttl: number;
  address?: string;
  domain?: string;
  ns?: string;
  target?: string;
  priority?: number;
  weight?: number;
  port?: number;
  data?: string[];
  primary?: string;
  admin?: string;
  serial?: number;
  refresh?: number;
  retry?: number;
  expiration?: number;
  minimum?: number;
}

/** A dns2 record in dig's presentation. */
function dns2Line(r: Dns2Record): string {
  const type = TYPE_NAMES.get(r.type) ?? String(r.type);
  const data = (() => {
    switch (type) {
      case "A":
        return r.address;
      case "AAAA":
        return new URL(`http://[${r.address}]/`).hostname.slice(1, -1);
      case "CNAME":
      case "PTR":
        return `${r.domain}.`;
      case "NS":
        return `${r.ns}.`;
      case "SRV":
        return `${r.priority} ${r.weight} ${r.port} ${r.target}.`;
      case "TXT":
        return (r.data ?? []).map((s) => `"${s}"`).join(" ");
      case "SOA":
        return `${r.primary}. ${r.admin}. ${r.serial} ${r.refresh} ${r.retry} ${r.expiration} ${r.minimum}`;
      default:
        return "?";
    }
  })();
  return `${r.name}. ${r.ttl} IN ${type} ${data}`;
}

interface Dns2Packet {
  header: { rcode: number; aa: number };
  answers: Dns2Record[];
  authorities: Dns2Record[];
  additionals: Dns2Record[];
}

function dns2Sections(p: Dns2Packet): Sections {
  const lines = (rs: Dns2Record[]) => rs.filter((r) => r.type !== dns2.Packet.TYPE.EDNS).map(dns2Line);
  return {
    rcode: RCODES[p.header.rcode] ?? String(p.header.rcode),
    aa: p.header.aa === 1,
    answer: lines(p.answers),
    authority: lines(p.authorities),
    additional: lines(p.additionals),
  };
}

// ---------------------------------------------------------------------------------------------------
// The processes

let tmp: string;
const apis: TestApiServer[] = [];
let mainServer: RunningServer | undefined;
let optionsServer: RunningServer | undefined;

before(async () => {
  startSec = Math.floor(Date.now() / 1000);
  tmp = mkdtempSync(join(tmpdir(), "kubernetes-records-"));
  const api = await startApiServer();
  const legacyApi = await startApiServer({ endpointSlices: false });
  apis.push(api, legacyApi);
  populate(api, CLUSTER);
  populate(legacyApi, LEGACY_CLUSTER);
  const env: Env = {
    api,
    kubeconfig: writeKubeconfig(tmp, api.url),
    contexts: writeKubeconfig(tmp, "http://127.0.0.1:1", {
      context: "dead",
      extraContexts: [{ name: "live", server: api.url }],
      fileName: "kubeconfig-contexts",
    }),
    legacy: writeKubeconfig(tmp, legacyApi.url, { fileName: "kubeconfig-legacy" }),
  };
  if (HAVE_OPENSSL) {
    const c = makeCerts(tmp);
    const tlsApi = await startApiServer({
      tls: { key: readFileSync(c.serverKey), cert: readFileSync(c.serverCert), ca: readFileSync(c.ca) },
    });
    apis.push(tlsApi);
    populate(tlsApi, CLUSTER);
    env.tls = { url: tlsApi.url, cert: c.clientCert, key: c.clientKey, ca: c.ca };
  }
  // Both start at once; one that started is kept for `after` even when the other failed.
  const [main, options] = await Promise.allSettled([
    // Each as if in a pod of the cluster (POD_IP): the name server's addresses come from its services.
    startServer(mainCorefile(env), { env: { POD_IP: "10.244.0.5" } }),
    startServer(optionsCorefile(env), { files: ZONE_FILES, env: { POD_IP: "10.244.1.1" } }),
  ]);
  if (main.status === "fulfilled") mainServer = main.value;
  if (options.status === "fulfilled") optionsServer = options.value;
  for (const r of [main, options]) if (r.status === "rejected") throw r.reason;
});

after(async () => {
  const running = [mainServer, optionsServer].filter((s) => s !== undefined);
  const codes = await Promise.all(running.map((s) => s.stop()));
  await Promise.all(apis.map((a) => a.close()));
  rmSync(tmp, { recursive: true, force: true });
  for (const code of codes) assert.equal(code, 0, "the servers exit cleanly");
});

// Rows of one table run a few at a time: each is a dig process.
const CONCURRENCY = 12;

describe("cluster.local with the default options, over dig", { concurrency: CONCURRENCY }, () => {
  const zones = ["cluster.local", "in-addr.arpa", "ip6.arpa"];
  for (const row of MAIN) {
    it(rowTitle(row), async () => {
      const got = await digRow(mainServer!.port, row);
      check(got, row, zones, 5, got.text);
    });
  }
});

for (const set of SETS) {
  describe(`option: ${set.title}`, { concurrency: CONCURRENCY, skip: set.skip }, () => {
    for (const row of set.rows) {
      it(rowTitle(row), async () => {
        const got = await digRow(optionsServer!.port, row);
        check(got, row, set.zones, set.ttl ?? 5, got.text);
      });
    }
  });
}

describe("a loop of ExternalNames", () => {
  it("asked 20 times, logs its too deep internal lookups once, not once a query", async () => {
    const deep = () => mainServer!.logs.filter((l) => /nested too deep/.test(String(l.msg))).length;
    const before = deep();
    for (let i = 0; i < 20; i++) {
      const r = await dig(mainServer!.port, "loop1.default.svc.cluster.local", "A");
      assert.equal(r.answer.length, 2);
    }
    assert.ok(deep() - before <= 1, `${deep() - before} lines`);
  });
});

describe("dns2, a second client, reads the same answers over UDP and TCP", () => {
  const pick = (q: string, type: string) => MAIN.find((r) => r.q === q && r.type === type && !r.opts)!;
  const rows = [
    pick("dual.default.svc.cluster.local", "AAAA"),
    pick("_mysql._tcp.db.web.svc.cluster.local", "SRV"),
    pick("ext.default.svc.cluster.local", "A"),
    pick(rev("fd00::a"), "PTR"),
    pick("dns-version.cluster.local", "TXT"),
    pick("nosuch.svc.cluster.local", "A"),
    pick("_tcp.web.default.svc.cluster.local", "SRV"),
  ];
  const zones = ["cluster.local", "in-addr.arpa", "ip6.arpa"];
  for (const transport of ["UDP", "TCP"] as const) {
    for (const row of rows) {
      it(`${transport} ${rowTitle(row)}`, async () => {
        const port = mainServer!.port;
        const ask =
          transport === "UDP"
            ? dns2.UDPClient({ dns: "127.0.0.1", port, timeout: 3000, retryOverTCP: false })
            : dns2.TCPClient({ dns: "127.0.0.1", port });
        const p = (await ask(row.q, row.type)) as unknown as Dns2Packet;
        check(dns2Sections(p), row, zones, 5, JSON.stringify(p));
      });
    }
  }
});

describe("start-up errors name the Corefile's file and line", { concurrency: true }, () => {
  const corefile = (lines: string[]) =>
    `cluster.local {\n    kubernetes {\n${lines.map((l) => `        ${l}\n`).join("")}    }\n}\n`;
  const cases: [string, () => string[], RegExp][] = [
    [
      "a multicluster zone the plugin is not authoritative for",
      () => ["multicluster clusterset.local"],
      /Corefile:3 - Error during parsing: kubernetes: multicluster: 'clusterset\.local\.' is not one of the plugin's zones/,
    ],
    ["an option given twice", () => ["ttl 5", "ttl 6"], /Corefile:4 - .*kubernetes: 'ttl' is given twice/],
    // The API refuses a label name over 63 characters (a qualified name): at start-up, not at every LIST.
    [
      "a label key whose name is over 63 characters",
      () => [`labels example.com/${"k".repeat(64)}=v`],
      /Corefile:3 - .*kubernetes: labels: invalid label key 'example\.com\/k+'/,
    ],
    // CoreDNS refuses the two together; -validate must not pass a Corefile CoreDNS will not start.
    [
      "namespaces and namespace_labels together",
      () => ["namespaces default", "namespace_labels team=a"],
      /Corefile:2 - .*kubernetes: namespaces and namespace_labels cannot both be set/,
    ],
    // Connection settings are checked when the plugin is set up: the line is the directive's.
    [
      "a context the kubeconfig does not have",
      () => [`kubeconfig ${join(tmp, "kubeconfig-contexts")} nowhere`],
      /Corefile:2 - .*kubernetes: context "nowhere" not found/,
    ],
  ];
  for (const [title, lines, re] of cases) {
    it(title, async () => {
      const r = await startFailure(corefile(lines()));
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, re);
    });
  }

  // CoreDNS fails at start-up here (client-go reads the files when it builds the transport); so does
  // clusterdns.
  it("tls files that do not exist", async () => {
    const text = corefile([
      "endpoint https://127.0.0.1:1",
      "tls /nonexistent/c.crt /nonexistent/c.key /nonexistent/ca.crt",
    ]);
    const started = await startServer(text).catch((err: Error) => err);
    if (!(started instanceof Error)) {
      await started.stop();
      assert.fail("clusterdns started with tls files that do not exist");
    }
    assert.match(started.message, /Corefile:\d+ - .*kubernetes: .*\/nonexistent\//);
  });
});
