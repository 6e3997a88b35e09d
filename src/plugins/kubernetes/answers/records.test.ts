import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Msg } from "../../../dns/message.ts";
import { newQuery, replyTo } from "../../../dns/message.ts";
import { Rcode, Type, rcodeName, typeFromName } from "../../../dns/constants.ts";
import { canonical } from "../../../dns/name.ts";
import { parseRRText, rrToText } from "../../../dns/text.ts";
import type { Kind, KObject } from "../model/source.ts";
import { Store } from "../store/store.ts";
import type { RecordsOptions } from "./records.ts";
import type { NameOptions } from "../names/service-names.ts";
import { DNS_SCHEMA_VERSION, Records, chase } from "./records.ts";
import { endpointSlice, endpoints, namespace, pod, service } from "../../../../test/k8s/objects.ts";

const ZONES = ["cluster.local.", "in-addr.arpa.", "ip6.arpa."];

const FIXTURE: [Kind, KObject][] = [
  ["namespaces", namespace("default")],
  ["namespaces", namespace("web")],
  ["namespaces", namespace("kube-system")],
  ["namespaces", namespace("empty")],
  [
    "services",
    service("kube-system", "kube-dns", {
      clusterIPs: ["10.96.0.10", "fd00::a"],
      ports: [
        { name: "dns", port: 53, protocol: "UDP" },
        { name: "dns-tcp", port: 53, protocol: "TCP" },
      ],
    }),
  ],
  [
    "services",
    service("default", "web", { clusterIP: "10.96.0.20", ports: [{ name: "http", port: 80 }, 8080] }),
  ],
  [
    "endpointslices",
    endpointSlice(
      "default",
      "web",
      "web-1",
      [
        { ip: "10.244.1.1", pod: "web-7d9f-abcde" },
        { ip: "10.244.1.2", ready: false },
      ],
      { ports: [{ name: "http", port: 8080 }] },
    ),
  ],
  [
    "services",
    service("default", "dual", {
      clusterIPs: ["10.96.0.30", "fd00::30"],
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  ["services", service("default", "idle", { clusterIP: "10.96.0.40", ports: [{ name: "http", port: 80 }] })],
  ["services", service("web", "db", { headless: true, ports: [{ name: "mysql", port: 3306 }] })],
  [
    "endpointslices",
    endpointSlice(
      "web",
      "db",
      "db-v4",
      [
        { ip: "10.244.2.1", hostname: "db-0" },
        { ip: "10.244.2.2", hostname: "db-1" },
        { ip: "10.244.2.3", hostname: "db-2", ready: false },
      ],
      { ports: [{ name: "mysql", port: 3306 }] },
    ),
  ],
  [
    "endpointslices",
    endpointSlice("web", "db", "db-v6", [{ ip: "fd00::2:1", hostname: "db-0" }], {
      ports: [{ name: "mysql", port: 3306 }],
      addressType: "IPv6",
    }),
  ],
  ["services", service("web", "lonely", { headless: true, ports: [{ name: "http", port: 80 }] })],
  ["services", service("web", "pnr", { headless: true, publishNotReadyAddresses: true })],
  ["endpointslices", endpointSlice("web", "pnr", "pnr-1", [{ ip: "10.244.3.1", ready: false }])],
  [
    "services",
    service("web", "manual", { headless: true, selector: null, ports: [{ name: "http", port: 80 }] }),
  ],
  [
    "endpoints",
    endpoints("web", "manual", [{ addresses: ["192.0.2.7"], ports: [{ name: "http", port: 8000 }] }]),
  ],
  ["services", service("default", "ext", { externalName: "www.example.org" })],
  ["pods", pod("default", "client", "10.244.9.9", { ips: ["10.244.9.9", "fd00::9:9"] })],
  // Endpoints in zones (the EndpointSlice controller's `zone`), for zonal names.
  ["namespaces", namespace("zonal")],
  ["services", service("zonal", "web", { clusterIP: "10.96.5.1", ports: [{ name: "http", port: 80 }] })],
  [
    "endpointslices",
    endpointSlice(
      "zonal",
      "web",
      "web-v4",
      [
        { ip: "10.244.5.1", zone: "zone-a", hints: ["zone-a"] },
        { ip: "10.244.5.2", zone: "zone-b" },
        { ip: "10.244.5.3", zone: "zone-a", ready: false },
        { ip: "10.244.5.4" },
      ],
      { ports: [{ name: "http", port: 8080 }] },
    ),
  ],
  [
    "endpointslices",
    endpointSlice("zonal", "web", "web-v6", [{ ip: "fd00::5:1", zone: "Zone-A" }], {
      ports: [{ name: "http", port: 8080 }],
      addressType: "IPv6",
    }),
  ],
  ["services", service("zonal", "hl", { headless: true, ports: [{ name: "http", port: 80 }, 81] })],
  [
    "endpointslices",
    endpointSlice(
      "zonal",
      "hl",
      "hl-1",
      [
        { ip: "10.244.6.1", hostname: "h-0", zone: "zone-a" },
        { ip: "10.244.6.2", zone: "zone-b" },
      ],
      { ports: [{ name: "http", port: 80 }, { port: 81 }] },
    ),
  ],
];

function fixture(
  o: Partial<RecordsOptions> = {},
  storeOptions: { endpointPodNames?: boolean; names?: NameOptions } = {},
  objects = FIXTURE,
): Records {
  const kinds: Kind[] = ["services", "endpointslices", "endpoints", "namespaces", "pods"];
  const store = new Store({ zones: ZONES, waitFor: kinds, keepPods: true, ...storeOptions });
  for (const kind of kinds) {
    store.listStart(kind);
    for (const [k, obj] of objects) if (k === kind) store.apply(kind, "ADDED", obj);
    store.listDone(kind);
  }
  return new Records(store, { zones: ZONES, ttl: 5, pods: "disabled", ...o });
}

interface Case {
  q: string;
  type: string;
  rcode: "NOERROR" | "NXDOMAIN";
  answer?: string[];
  additional?: string[];
  chase?: string;
}

const text = (lines: readonly string[]) => lines.map((l) => rrToText(parseRRText(l))).sort();

function check(r: Records, c: Case): void {
  const qname = canonical(c.q);
  const zone = r.zoneOf(qname);
  assert.ok(zone, `${qname} is in a zone`);
  const a = r.answer(zone, qname, typeFromName(c.type)!);
  const what = `${c.q} ${c.type}`;
  assert.equal(rcodeName(a.rcode), c.rcode, `${what}: rcode`);
  assert.deepEqual(a.answer.map(rrToText).sort(), text(c.answer ?? []), `${what}: answer`);
  assert.deepEqual(a.additional.map(rrToText).sort(), text(c.additional ?? []), `${what}: additional`);
  // Every negative answer carries the zone's SOA; a positive one nothing in authority.
  const soa = (c.answer ?? []).length === 0 ? [rrToText(r.soa(zone))] : [];
  assert.deepEqual(a.authority.map(rrToText), soa, `${what}: authority`);
  assert.equal(a.chase, c.chase, `${what}: chase`);
}

function table(title: string, r: () => Records, cases: Case[]): void {
  describe(title, () => {
    const records = r();
    for (const c of cases) {
      it(`${c.q} ${c.type} -> ${c.rcode} ${(c.answer ?? []).length}`, () => check(records, c));
    }
  });
}

const SOA_LOCAL =
  /^cluster\.local\.\t5\tIN\tSOA\tns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 5$/;

table("records: services with a cluster IP", () => fixture(), [
  {
    q: "web.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  },
  {
    q: "WEB.Default.SVC.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  },
  { q: "web.default.svc.cluster.local", type: "AAAA", rcode: "NOERROR" },
  // A label holding a dot (RFC 2181 11) is one label: no such namespace, service or port name.
  { q: "web\\.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "_http\\._tcp.web.default.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "web.default.svc.cluster.local", type: "TXT", rcode: "NOERROR" },
  // SRV at the service's own name: every port, named or not (CoreDNS matches an empty port and
  // protocol against all), each address counting for the weight.
  {
    q: "web.default.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "web.default.svc.cluster.local. 5 IN SRV 0 50 80 web.default.svc.cluster.local.",
      "web.default.svc.cluster.local. 5 IN SRV 0 50 8080 web.default.svc.cluster.local.",
    ],
    additional: ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  },
  {
    q: "dual.default.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["dual.default.svc.cluster.local. 5 IN SRV 0 50 80 dual.default.svc.cluster.local."],
    additional: [
      "dual.default.svc.cluster.local. 5 IN A 10.96.0.30",
      "dual.default.svc.cluster.local. 5 IN AAAA fd00::30",
    ],
  },
  {
    q: "idle.default.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["idle.default.svc.cluster.local. 5 IN SRV 0 100 80 idle.default.svc.cluster.local."],
    additional: ["idle.default.svc.cluster.local. 5 IN A 10.96.0.40"],
  },
  {
    q: "web.default.svc.cluster.local",
    type: "ANY",
    rcode: "NOERROR",
    answer: [
      "web.default.svc.cluster.local. 5 IN A 10.96.0.20",
      "web.default.svc.cluster.local. 5 IN SRV 0 50 80 web.default.svc.cluster.local.",
      "web.default.svc.cluster.local. 5 IN SRV 0 50 8080 web.default.svc.cluster.local.",
    ],
    additional: ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  },
  {
    q: "dual.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["dual.default.svc.cluster.local. 5 IN A 10.96.0.30"],
  },
  {
    q: "dual.default.svc.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["dual.default.svc.cluster.local. 5 IN AAAA fd00::30"],
  },
  {
    q: "_http._tcp.web.default.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["_http._tcp.web.default.svc.cluster.local. 5 IN SRV 0 100 80 web.default.svc.cluster.local."],
    additional: ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  },
  {
    q: "_http._tcp.dual.default.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    // CoreDNS counts each address for the weight: two here, one record (plugin/backend_lookup.go).
    answer: ["_http._tcp.dual.default.svc.cluster.local. 5 IN SRV 0 50 80 dual.default.svc.cluster.local."],
    additional: [
      "dual.default.svc.cluster.local. 5 IN A 10.96.0.30",
      "dual.default.svc.cluster.local. 5 IN AAAA fd00::30",
    ],
  },
  {
    q: "_dns._udp.kube-dns.kube-system.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "_dns._udp.kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 50 53 kube-dns.kube-system.svc.cluster.local.",
    ],
    additional: [
      "kube-dns.kube-system.svc.cluster.local. 5 IN A 10.96.0.10",
      "kube-dns.kube-system.svc.cluster.local. 5 IN AAAA fd00::a",
    ],
  },
  { q: "_http._tcp.web.default.svc.cluster.local", type: "A", rcode: "NOERROR" },
  { q: "_http._udp.web.default.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "_dns._tcp.kube-dns.kube-system.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "_tcp.web.default.svc.cluster.local", type: "SRV", rcode: "NOERROR" },
  { q: "_udp.web.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "_http.web.default.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "http._tcp.web.default.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "x._http._tcp.web.default.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  // Endpoint names exist under every service with endpoints (as in CoreDNS), ready ones only.
  {
    q: "10-244-1-1.web.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["10-244-1-1.web.default.svc.cluster.local. 5 IN A 10.244.1.1"],
  },
  { q: "10-244-1-1.web.default.svc.cluster.local", type: "AAAA", rcode: "NOERROR" },
  { q: "10-244-1-2.web.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  {
    q: "idle.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["idle.default.svc.cluster.local. 5 IN A 10.96.0.40"],
  },
  { q: "nothere.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "web.web.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
]);

table("records: headless services", () => fixture(), [
  {
    q: "db.web.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["db.web.svc.cluster.local. 5 IN A 10.244.2.1", "db.web.svc.cluster.local. 5 IN A 10.244.2.2"],
  },
  {
    q: "db.web.svc.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["db.web.svc.cluster.local. 5 IN AAAA fd00::2:1"],
  },
  {
    q: "db-0.db.web.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["db-0.db.web.svc.cluster.local. 5 IN A 10.244.2.1"],
  },
  {
    q: "db-0.db.web.svc.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["db-0.db.web.svc.cluster.local. 5 IN AAAA fd00::2:1"],
  },
  { q: "db-0.db.web.svc.cluster.local", type: "TXT", rcode: "NOERROR" },
  { q: "db-2.db.web.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "10-244-2-1.db.web.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  {
    q: "_mysql._tcp.db.web.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "_mysql._tcp.db.web.svc.cluster.local. 5 IN SRV 0 33 3306 db-0.db.web.svc.cluster.local.",
      "_mysql._tcp.db.web.svc.cluster.local. 5 IN SRV 0 33 3306 db-1.db.web.svc.cluster.local.",
    ],
    additional: [
      "db-0.db.web.svc.cluster.local. 5 IN A 10.244.2.1",
      "db-0.db.web.svc.cluster.local. 5 IN AAAA fd00::2:1",
      "db-1.db.web.svc.cluster.local. 5 IN A 10.244.2.2",
    ],
  },
  // SRV at a headless service's own name: every port of every endpoint, to the endpoint's name; both of
  // db-0's addresses count for the weight (CoreDNS's handler_test.go: six entries, five records, 16).
  {
    q: "db.web.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "db.web.svc.cluster.local. 5 IN SRV 0 33 3306 db-0.db.web.svc.cluster.local.",
      "db.web.svc.cluster.local. 5 IN SRV 0 33 3306 db-1.db.web.svc.cluster.local.",
    ],
    additional: [
      "db-0.db.web.svc.cluster.local. 5 IN A 10.244.2.1",
      "db-0.db.web.svc.cluster.local. 5 IN AAAA fd00::2:1",
      "db-1.db.web.svc.cluster.local. 5 IN A 10.244.2.2",
    ],
  },
  {
    q: "hl.zonal.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "hl.zonal.svc.cluster.local. 5 IN SRV 0 25 80 h-0.hl.zonal.svc.cluster.local.",
      "hl.zonal.svc.cluster.local. 5 IN SRV 0 25 81 h-0.hl.zonal.svc.cluster.local.",
      "hl.zonal.svc.cluster.local. 5 IN SRV 0 25 80 10-244-6-2.hl.zonal.svc.cluster.local.",
      "hl.zonal.svc.cluster.local. 5 IN SRV 0 25 81 10-244-6-2.hl.zonal.svc.cluster.local.",
    ],
    additional: [
      "h-0.hl.zonal.svc.cluster.local. 5 IN A 10.244.6.1",
      "10-244-6-2.hl.zonal.svc.cluster.local. 5 IN A 10.244.6.2",
    ],
  },
  // Headless without ports: the name exists, with no SRV record.
  { q: "pnr.web.svc.cluster.local", type: "SRV", rcode: "NOERROR" },
  // The spec: a headless service without ready endpoints is NXDOMAIN, and so is everything below it.
  { q: "lonely.web.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "lonely.web.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "_http._tcp.lonely.web.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  {
    q: "pnr.web.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["pnr.web.svc.cluster.local. 5 IN A 10.244.3.1"],
  },
  // A selectorless service with a hand-made Endpoints object; SRV takes the endpoints' port.
  {
    q: "manual.web.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["manual.web.svc.cluster.local. 5 IN A 192.0.2.7"],
  },
  {
    q: "_http._tcp.manual.web.svc.cluster.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "_http._tcp.manual.web.svc.cluster.local. 5 IN SRV 0 100 8000 192-0-2-7.manual.web.svc.cluster.local.",
    ],
    additional: ["192-0-2-7.manual.web.svc.cluster.local. 5 IN A 192.0.2.7"],
  },
]);

// CoreDNS's zonal_test.go (PR 8388): its fixture, written again with this project's object builders,
// and its table. With `zonal`, a headless service answers ZONE.pin._zone.SERVICE (its endpoints in
// ZONE, NODATA when none is there) and ZONE.prefer._zone.SERVICE (the same, or every endpoint when
// none is there), for A, AAAA and SRV; other types are NODATA.
const COREDNS_ZONAL: [Kind, KObject][] = [
  ["namespaces", namespace("testns")],
  ["services", service("testns", "hdls", { headless: true })],
  ["services", service("testns", "clstr", { clusterIP: "10.0.0.10", ports: [{ name: "http", port: 80 }] })],
  [
    "endpointslices",
    endpointSlice(
      "testns",
      "hdls",
      "hdls-slice",
      [
        { ip: "172.0.0.1", zone: "us-west-2a" },
        { ip: "172.0.0.2", zone: "us-west-2b" },
        { ip: "172.0.0.3", zone: "us-west-2b" },
      ],
      { ports: [{ name: "http", port: 80 }] },
    ),
  ],
];

const zonalFixture = (zonal: boolean) => fixture({}, { names: { zonal } }, COREDNS_ZONAL);
const HDLS = "hdls.testns.svc.cluster.local.";

table("records: zonal names, CoreDNS's table (zonal)", () => zonalFixture(true), [
  {
    q: `us-west-2a.pin._zone.${HDLS}`,
    type: "A",
    rcode: "NOERROR",
    answer: [`us-west-2a.pin._zone.${HDLS} 5 IN A 172.0.0.1`],
  },
  {
    q: `us-west-2b.pin._zone.${HDLS}`,
    type: "A",
    rcode: "NOERROR",
    answer: [
      `us-west-2b.pin._zone.${HDLS} 5 IN A 172.0.0.2`,
      `us-west-2b.pin._zone.${HDLS} 5 IN A 172.0.0.3`,
    ],
  },
  // Any zone without endpoints there, drained or mistyped, is the same NODATA.
  { q: `us-west-2c.pin._zone.${HDLS}`, type: "A", rcode: "NOERROR" },
  {
    q: `us-west-2a.prefer._zone.${HDLS}`,
    type: "A",
    rcode: "NOERROR",
    answer: [`us-west-2a.prefer._zone.${HDLS} 5 IN A 172.0.0.1`],
  },
  // prefer falls back to every endpoint.
  {
    q: `us-west-2c.prefer._zone.${HDLS}`,
    type: "A",
    rcode: "NOERROR",
    answer: [
      `us-west-2c.prefer._zone.${HDLS} 5 IN A 172.0.0.1`,
      `us-west-2c.prefer._zone.${HDLS} 5 IN A 172.0.0.2`,
      `us-west-2c.prefer._zone.${HDLS} 5 IN A 172.0.0.3`,
    ],
  },
  { q: "us-west-2a.pin._zone.ghost.testns.svc.cluster.local.", type: "A", rcode: "NXDOMAIN" },
  { q: `us-west-2a.florp._zone.${HDLS}`, type: "A", rcode: "NXDOMAIN" },
  // Headless services only.
  { q: "us-west-2a.pin._zone.clstr.testns.svc.cluster.local.", type: "A", rcode: "NXDOMAIN" },
  { q: `us-west-2c.pin._zone.${HDLS}`, type: "TXT", rcode: "NOERROR" },
  {
    q: `us-west-2c.prefer._zone.${HDLS}`,
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      `us-west-2c.prefer._zone.${HDLS} 5 IN SRV 0 33 80 172-0-0-1.${HDLS}`,
      `us-west-2c.prefer._zone.${HDLS} 5 IN SRV 0 33 80 172-0-0-2.${HDLS}`,
      `us-west-2c.prefer._zone.${HDLS} 5 IN SRV 0 33 80 172-0-0-3.${HDLS}`,
    ],
    additional: [
      `172-0-0-1.${HDLS} 5 IN A 172.0.0.1`,
      `172-0-0-2.${HDLS} 5 IN A 172.0.0.2`,
      `172-0-0-3.${HDLS} 5 IN A 172.0.0.3`,
    ],
  },
  { q: `us-west-2c.prefer._zone.${HDLS}`, type: "TXT", rcode: "NOERROR" },
  {
    q: `us-west-2b.pin._zone.${HDLS}`,
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      `us-west-2b.pin._zone.${HDLS} 5 IN SRV 0 50 80 172-0-0-2.${HDLS}`,
      `us-west-2b.pin._zone.${HDLS} 5 IN SRV 0 50 80 172-0-0-3.${HDLS}`,
    ],
    additional: [`172-0-0-2.${HDLS} 5 IN A 172.0.0.2`, `172-0-0-3.${HDLS} 5 IN A 172.0.0.3`],
  },
  // From CoreDNS's README: a zone value may span labels (Kubernetes zone labels may hold dots).
  { q: `corp.example.com.pin._zone.${HDLS}`, type: "A", rcode: "NOERROR" },
  // Their parents exist (RFC 8020: a name with names below it is not NXDOMAIN); CoreDNS answers
  // NXDOMAIN for them.
  { q: `pin._zone.${HDLS}`, type: "A", rcode: "NOERROR" },
  { q: `prefer._zone.${HDLS}`, type: "A", rcode: "NOERROR" },
  { q: `_zone.${HDLS}`, type: "A", rcode: "NOERROR" },
  { q: "_zone.clstr.testns.svc.cluster.local.", type: "A", rcode: "NXDOMAIN" },
]);

table("records: zonal names, CoreDNS's table (without zonal)", () => zonalFixture(false), [
  { q: `us-west-2a.pin._zone.${HDLS}`, type: "A", rcode: "NXDOMAIN" },
  { q: `us-west-2a.prefer._zone.${HDLS}`, type: "A", rcode: "NXDOMAIN" },
  { q: `pin._zone.${HDLS}`, type: "A", rcode: "NXDOMAIN" },
  { q: `_zone.${HDLS}`, type: "A", rcode: "NXDOMAIN" },
]);

describe("records: a zone with dots (CoreDNS: a zonal name's zone is every label left of it)", () => {
  const objects: [Kind, KObject][] = [
    ["namespaces", namespace("testns")],
    ["services", service("testns", "db", { headless: true })],
    ["endpointslices", endpointSlice("testns", "db", "db-1", [{ ip: "10.1.0.1", zone: "corp.example.com" }])],
  ];
  it("answers its endpoints", () => {
    const r = fixture({}, { names: { zonal: true } }, objects);
    check(r, {
      q: "corp.example.com.pin._zone.db.testns.svc.cluster.local",
      type: "A",
      rcode: "NOERROR",
      answer: ["corp.example.com.pin._zone.db.testns.svc.cluster.local. 5 IN A 10.1.0.1"],
    });
    check(r, { q: "example.com.pin._zone.db.testns.svc.cluster.local", type: "A", rcode: "NOERROR" });
  });
});

describe("records: zonal names are cached only when the store lists them", () => {
  const r = zonalFixture(true);
  const cacheable = (q: string, type = Type.A) => !r.answer("cluster.local.", q, type).uncacheable;
  it("a zone an endpoint is in: listed, cached", () => {
    assert.equal(cacheable(`us-west-2a.pin._zone.${HDLS}`), true);
    assert.equal(cacheable(`us-west-2b.prefer._zone.${HDLS}`), true);
  });
  it("any other zone: not listed (there are as many as labels), not cached", () => {
    assert.equal(cacheable(`us-west-2c.pin._zone.${HDLS}`), false);
    assert.equal(cacheable(`us-west-2c.prefer._zone.${HDLS}`), false);
  });
});

table("records: ExternalName", () => fixture(), [
  {
    q: "ext.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["ext.default.svc.cluster.local. 5 IN CNAME www.example.org."],
    chase: "www.example.org.",
  },
  {
    q: "ext.default.svc.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["ext.default.svc.cluster.local. 5 IN CNAME www.example.org."],
    chase: "www.example.org.",
  },
  {
    q: "ext.default.svc.cluster.local",
    type: "CNAME",
    rcode: "NOERROR",
    answer: ["ext.default.svc.cluster.local. 5 IN CNAME www.example.org."],
  },
  {
    q: "ext.default.svc.cluster.local",
    type: "ANY",
    rcode: "NOERROR",
    answer: ["ext.default.svc.cluster.local. 5 IN CNAME www.example.org."],
  },
  { q: "x.ext.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
]);

table("records: the zone's own names, namespaces and empty non-terminals", () => fixture(), [
  {
    q: "dns-version.cluster.local",
    type: "TXT",
    rcode: "NOERROR",
    answer: [`dns-version.cluster.local. 28800 IN TXT "${DNS_SCHEMA_VERSION}"`],
  },
  { q: "dns-version.cluster.local", type: "A", rcode: "NOERROR" },
  {
    q: "cluster.local",
    type: "NS",
    rcode: "NOERROR",
    answer: ["cluster.local. 5 IN NS ns.dns.cluster.local."],
    additional: ["ns.dns.cluster.local. 5 IN A 10.96.0.10", "ns.dns.cluster.local. 5 IN AAAA fd00::a"],
  },
  { q: "cluster.local", type: "A", rcode: "NOERROR" },
  {
    q: "ns.dns.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["ns.dns.cluster.local. 5 IN A 10.96.0.10"],
  },
  {
    q: "ns.dns.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["ns.dns.cluster.local. 5 IN AAAA fd00::a"],
  },
  { q: "dns.cluster.local", type: "A", rcode: "NOERROR" },
  { q: "x.dns.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "svc.cluster.local", type: "A", rcode: "NOERROR" },
  { q: "pod.cluster.local", type: "A", rcode: "NOERROR" },
  { q: "default.svc.cluster.local", type: "A", rcode: "NOERROR" },
  { q: "empty.svc.cluster.local", type: "SRV", rcode: "NOERROR" },
  { q: "nonexistent.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "web.nonexistent.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "foo.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "a.b.c.d.web.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  // No wildcards: "*" and "any" are names like any other.
  { q: "*.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "any.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
]);

table("records: reverse zones", () => fixture(), [
  {
    q: "20.0.96.10.in-addr.arpa",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["20.0.96.10.in-addr.arpa. 5 IN PTR web.default.svc.cluster.local."],
  },
  {
    q: "10.0.96.10.in-addr.arpa",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["10.0.96.10.in-addr.arpa. 5 IN PTR kube-dns.kube-system.svc.cluster.local."],
  },
  {
    q: "1.1.244.10.in-addr.arpa",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["1.1.244.10.in-addr.arpa. 5 IN PTR 10-244-1-1.web.default.svc.cluster.local."],
  },
  {
    q: "1.2.244.10.in-addr.arpa",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["1.2.244.10.in-addr.arpa. 5 IN PTR db-0.db.web.svc.cluster.local."],
  },
  { q: "1.2.244.10.in-addr.arpa", type: "A", rcode: "NOERROR" },
  { q: "2.1.244.10.in-addr.arpa", type: "PTR", rcode: "NXDOMAIN" },
  { q: "3.2.244.10.in-addr.arpa", type: "PTR", rcode: "NXDOMAIN" },
  { q: "9.9.244.10.in-addr.arpa", type: "PTR", rcode: "NXDOMAIN" },
  { q: "244.10.in-addr.arpa", type: "PTR", rcode: "NOERROR" },
  { q: "10.in-addr.arpa", type: "PTR", rcode: "NOERROR" },
  { q: "11.in-addr.arpa", type: "PTR", rcode: "NXDOMAIN" },
  { q: "x.20.0.96.10.in-addr.arpa", type: "PTR", rcode: "NXDOMAIN" },
  {
    q: "1.0.0.0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa",
    type: "PTR",
    rcode: "NOERROR",
    answer: [
      "1.0.0.0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 5 IN PTR db-0.db.web.svc.cluster.local.",
    ],
  },
  {
    q: "in-addr.arpa",
    type: "NS",
    rcode: "NOERROR",
    answer: ["in-addr.arpa. 5 IN NS ns.dns.cluster.local."],
    additional: ["ns.dns.cluster.local. 5 IN A 10.96.0.10", "ns.dns.cluster.local. 5 IN AAAA fd00::a"],
  },
]);

table("records: pods disabled", () => fixture(), [
  { q: "10-244-9-9.default.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "default.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "pod.cluster.local", type: "A", rcode: "NOERROR" },
]);

table("records: pods insecure", () => fixture({ pods: "insecure" }), [
  {
    q: "1-2-3-4.default.pod.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["1-2-3-4.default.pod.cluster.local. 5 IN A 1.2.3.4"],
  },
  { q: "1-2-3-4.default.pod.cluster.local", type: "AAAA", rcode: "NOERROR" },
  {
    q: "fd00--9-9.default.pod.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["fd00--9-9.default.pod.cluster.local. 5 IN AAAA fd00::9:9"],
  },
  { q: "1-2-3-4.nonexistent.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "1-2-3-999.default.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "web.default.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "x.1-2-3-4.default.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "default.pod.cluster.local", type: "A", rcode: "NOERROR" },
]);

table("records: pods verified", () => fixture({ pods: "verified" }), [
  {
    q: "10-244-9-9.default.pod.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["10-244-9-9.default.pod.cluster.local. 5 IN A 10.244.9.9"],
  },
  {
    q: "fd00--9-9.default.pod.cluster.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["fd00--9-9.default.pod.cluster.local. 5 IN AAAA fd00::9:9"],
  },
  { q: "10-244-9-9.web.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "1-2-3-4.default.pod.cluster.local", type: "A", rcode: "NXDOMAIN" },
]);

table("records: ignore empty_service", () => fixture({}, { names: { ignoreEmptyService: true } }), [
  { q: "idle.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  { q: "_http._tcp.idle.default.svc.cluster.local", type: "SRV", rcode: "NXDOMAIN" },
  {
    q: "web.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["web.default.svc.cluster.local. 5 IN A 10.96.0.20"],
  },
  {
    q: "ext.default.svc.cluster.local",
    type: "CNAME",
    rcode: "NOERROR",
    answer: ["ext.default.svc.cluster.local. 5 IN CNAME www.example.org."],
  },
]);

table("records: endpoint_pod_names", () => fixture({}, { endpointPodNames: true }), [
  {
    q: "web-7d9f-abcde.web.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["web-7d9f-abcde.web.default.svc.cluster.local. 5 IN A 10.244.1.1"],
  },
  { q: "10-244-1-1.web.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  {
    q: "db-0.db.web.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["db-0.db.web.svc.cluster.local. 5 IN A 10.244.2.1"],
  },
  {
    q: "1.1.244.10.in-addr.arpa",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["1.1.244.10.in-addr.arpa. 5 IN PTR web-7d9f-abcde.web.default.svc.cluster.local."],
  },
]);

table("records: ttl 30", () => fixture({ ttl: 30 }), [
  {
    q: "web.default.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["web.default.svc.cluster.local. 30 IN A 10.96.0.20"],
  },
]);

table(
  "records: ttl 3600 (the SOA record's own TTL is capped at 300, its minimum is not)",
  () => fixture({ ttl: 3600 }),
  [
    {
      q: "web.default.svc.cluster.local",
      type: "A",
      rcode: "NOERROR",
      answer: ["web.default.svc.cluster.local. 3600 IN A 10.96.0.20"],
    },
    { q: "nothere.default.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  ],
);

describe("records: SOA, zones and ExternalName chasing", () => {
  it("the SOA names ns.dns and hostmaster of the zone; its minimum is the TTL; its serial the last change", () => {
    const r = fixture();
    assert.match(rrToText(r.soa("cluster.local.")), SOA_LOCAL);
    // A reverse zone's SOA names ns.dns in that zone, as CoreDNS's does.
    const rev = rrToText(r.soa("in-addr.arpa."));
    assert.match(
      rev,
      /^in-addr\.arpa\.\t5\tIN\tSOA\tns\.dns\.in-addr\.arpa\. hostmaster\.in-addr\.arpa\. \d+ /,
    );
    const serial = Number(rrToText(r.soa("cluster.local.")).split(" ")[2]);
    assert.ok(Math.abs(serial - Date.now() / 1000) < 3600, `serial ${serial} is a recent Unix time`);
    assert.equal(
      rrToText(fixture({ ttl: 0 }).soa("cluster.local."))
        .split(" ")
        .at(-1),
      "0",
    );
    const big = rrToText(fixture({ ttl: 3600 }).soa("cluster.local.")).split(/\s+/);
    assert.deepEqual([big[1], big.at(-1)], ["300", "3600"], "TTL capped at 300, minimum the TTL");
  });

  it("the SOA at the apex answers SOA and ANY", () => {
    const r = fixture();
    const soa = r.answer("cluster.local.", "cluster.local.", Type.SOA);
    assert.deepEqual(soa.answer.map(rrToText), [rrToText(r.soa("cluster.local."))]);
    const any = r.answer("cluster.local.", "cluster.local.", Type.ANY);
    assert.deepEqual(any.answer.map((rr) => rr.type).sort(), [Type.NS, Type.SOA]);
  });

  it("picks the most specific zone, and none for names outside", () => {
    const store = new Store({ zones: ["cluster.local.", "10.in-addr.arpa.", "in-addr.arpa."], waitFor: [] });
    const r = new Records(store, {
      zones: ["in-addr.arpa.", "cluster.local.", "10.in-addr.arpa."],
      ttl: 5,
      pods: "disabled",
    });
    assert.equal(r.zoneOf("1.0.0.10.in-addr.arpa."), "10.in-addr.arpa.");
    assert.equal(r.zoneOf("1.0.0.11.in-addr.arpa."), "in-addr.arpa.");
    assert.equal(r.zoneOf("example.org."), undefined);
    assert.equal(r.zoneOf("x\\.cluster.local."), undefined, "one label x.cluster, then local");
    assert.equal(r.primary, "cluster.local.");
  });

  it("needs a forward zone", () => {
    const store = new Store({ zones: ["in-addr.arpa."], waitFor: [] });
    assert.throws(() => new Records(store, { zones: ["in-addr.arpa."], ttl: 5, pods: "disabled" }));
  });

  it("chase appends what the server answers for the target, and nothing when it does not", async () => {
    const r = fixture();
    const q = (name: string, qtype: number): Msg => newQuery(name, qtype);
    const asked: string[] = [];
    const a = r.answer("cluster.local.", "ext.default.svc.cluster.local.", Type.A);
    await chase(a, Type.A, (name, qtype) => {
      asked.push(`${name} ${qtype}`);
      const reply = replyTo(q(name, qtype));
      reply.answer.push(parseRRText("www.example.org. 300 IN A 192.0.2.80"));
      return Promise.resolve(reply);
    });
    assert.deepEqual(asked, ["www.example.org. 1"]);
    assert.deepEqual(
      a.answer.map(rrToText),
      [
        "ext.default.svc.cluster.local. 5 IN CNAME www.example.org.",
        "www.example.org. 300 IN A 192.0.2.80",
      ].map((l) => rrToText(parseRRText(l))),
      "the CNAME first, then the target's records",
    );

    const refused = r.answer("cluster.local.", "ext.default.svc.cluster.local.", Type.A);
    await chase(refused, Type.A, (name, qtype) => Promise.resolve(replyTo(q(name, qtype), Rcode.REFUSED)));
    assert.equal(refused.answer.length, 1);
    const failed = r.answer("cluster.local.", "ext.default.svc.cluster.local.", Type.A);
    await chase(failed, Type.A, () => Promise.reject(new Error("boom")));
    assert.equal(failed.answer.length, 1);
  });

  it("marks verified pod names in a non-canonical spelling as uncacheable", () => {
    const r = fixture({ pods: "verified" });
    const long = "fd00-0-0-0-0-0-9-9.default.pod.cluster.local.";
    assert.equal(r.answer("cluster.local.", long, Type.AAAA).uncacheable, true);
    assert.equal(r.answer("cluster.local.", long, Type.AAAA).answer.length, 1);
    assert.equal(
      r.answer("cluster.local.", "fd00--9-9.default.pod.cluster.local.", Type.AAAA).uncacheable,
      false,
    );
    assert.equal(
      r.answer("cluster.local.", "fd00-0-0-0-0-0-1-1.default.pod.cluster.local.", Type.AAAA).uncacheable,
      true,
    );
  });
});

describe("records: the name server's addresses (ns.dns.<zone>)", () => {
  const ns = (r: Records) =>
    r
      .answer("cluster.local.", "ns.dns.cluster.local.", Type.A)
      .answer.map(rrToText)
      .map((l) => l.split("\t").at(-1));
  const withLocal = (localIPs: string[], extra: [Kind, KObject][] = []) => {
    const kinds: Kind[] = ["services", "endpointslices", "namespaces"];
    const store = new Store({ zones: ZONES, waitFor: kinds, localIPs });
    for (const kind of kinds) {
      store.listStart(kind);
      for (const [k, obj] of [...FIXTURE, ...extra]) if (k === kind) store.apply(kind, "ADDED", obj);
      store.listDone(kind);
    }
    return new Records(store, {
      zones: ZONES,
      ttl: 5,
      pods: "disabled",
      localIPs,
    });
  };

  it("are the cluster IPs of the service whose endpoints hold this server's own address", () => {
    const own: [Kind, KObject][] = [
      ["services", service("kube-system", "clusterdns", { clusterIP: "10.96.0.53", ports: [53] })],
      ["endpointslices", endpointSlice("kube-system", "clusterdns", "cd-1", ["10.244.0.53"])],
    ];
    assert.deepEqual(ns(withLocal(["10.244.0.53"], own)), ["10.96.0.53"]);
  });

  it("are a headless service's endpoint addresses", () => {
    const own: [Kind, KObject][] = [
      ["services", service("kube-system", "dns-peers", { headless: true })],
      ["endpointslices", endpointSlice("kube-system", "dns-peers", "p-1", ["10.244.0.53", "10.244.0.54"])],
    ];
    assert.deepEqual(ns(withLocal(["10.244.0.53"], own)), ["10.244.0.53", "10.244.0.54"]);
  });

  it("fall back to kube-system/kube-dns, then to this server's own addresses", () => {
    assert.deepEqual(ns(withLocal(["192.0.2.53"])), ["10.96.0.10"]);
    const noKubeDns = FIXTURE.filter(([, o]) => o.metadata.name !== "kube-dns");
    const kinds: Kind[] = ["services"];
    const store = new Store({ zones: ZONES, waitFor: kinds });
    store.listStart("services");
    for (const [k, o] of noKubeDns) if (k === "services") store.apply("services", "ADDED", o);
    store.listDone("services");
    const r = new Records(store, {
      zones: ZONES,
      ttl: 5,
      pods: "disabled",
      localIPs: ["192.0.2.53", "2001:db8::53"],
    });
    assert.deepEqual(ns(r), ["192.0.2.53"]);
  });
});

describe("records: the client's spelling of the zone", () => {
  it("SRV targets keep it (as CoreDNS's preserve-case cases), and such an answer is not cached", () => {
    const r = fixture();
    const a = r.answer(
      "cluster.local.",
      "_http._tcp.web.default.svc.cluster.local.",
      Type.SRV,
      "CLUSTER.local.",
    );
    // (parseRRText would lowercase the names: the spelling is checked on the records themselves.)
    assert.deepEqual(
      a.answer.map((rr) => (rr.data as { target: string }).target),
      ["web.default.svc.CLUSTER.local."],
    );
    assert.deepEqual(
      a.additional.map((rr) => `${rr.name} ${(rr.data as { address: string }).address}`),
      ["web.default.svc.CLUSTER.local. 10.96.0.20"],
    );
    assert.equal(a.uncacheable, true);
    const h = r.answer("cluster.local.", "db.web.svc.cluster.local.", Type.SRV, "Cluster.Local.");
    assert.ok(
      h.answer.every((rr) => (rr.data as { target: string }).target.endsWith(".db.web.svc.Cluster.Local.")),
    );
    assert.equal(
      r.answer("cluster.local.", "web.default.svc.cluster.local.", Type.A, "CLUSTER.local.").uncacheable,
      false,
    );
    assert.equal(r.answer("cluster.local.", "web.default.svc.cluster.local.", Type.SRV).uncacheable, false);
  });
});
