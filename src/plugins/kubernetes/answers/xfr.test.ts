// The kubernetes plugin's zone transfer: CoreDNS's kubernetes/xfr_test.go cases (its fixture, written
// again here with this project's object builders), and the rule that makes a transfer trustworthy: it
// holds exactly the records the plugin answers queries with, no more and no fewer.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RR } from "../../../dns/message.ts";
import { Type } from "../../../dns/constants.ts";
import { join } from "../../../dns/name.ts";
import { parseRRText, rrToText } from "../../../dns/text.ts";
import type { Kind, KObject } from "../model/source.ts";
import { Store } from "../store/store.ts";
import { Records } from "./records.ts";
import { footprint } from "../store/footprint.ts";
import type { NameOptions } from "../names/service-names.ts";
import { kubernetesTransferer } from "./xfr.ts";
import { endpointSlice, endpoints, namespace, service } from "../../../../test/k8s/objects.ts";

const ZONE = "cluster.local.";

// CoreDNS's handler fixture as its transfer test sees it (namespaces testns and kube-system): its
// hdls1 is one Endpoints subset of six addresses of both families, written so here too.
const COREDNS_FIXTURE: [Kind, KObject][] = [
  ["namespaces", namespace("testns")],
  ["namespaces", namespace("kube-system")],
  ["services", service("testns", "svc1", { clusterIP: "10.0.0.1", ports: [{ name: "http", port: 80 }] })],
  ["services", service("testns", "svcempty", { clusterIP: "10.0.0.1", ports: [{ name: "http", port: 80 }] })],
  ["services", service("testns", "svc6", { clusterIP: "1234:abcd::1", ports: [{ name: "http", port: 80 }] })],
  [
    "services",
    service("testns", "svc-dual-stack", {
      clusterIPs: ["10.0.0.3", "10::3"],
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  ["services", service("testns", "hdls1", { headless: true })],
  [
    "endpoints",
    endpoints("testns", "hdls1", [
      {
        addresses: [
          "172.0.0.2",
          "172.0.0.3",
          { ip: "172.0.0.4", hostname: "dup-name" },
          { ip: "172.0.0.5", hostname: "dup-name" },
          "5678:abcd::1",
          "5678:abcd::2",
        ],
        ports: [{ name: "http", port: 80 }],
      },
    ]),
  ],
  ["services", service("testns", "hdlsprtls", { headless: true })],
  ["endpointslices", endpointSlice("testns", "hdlsprtls", "hdlsprtls-1", ["172.0.0.20"])],
  ["services", service("testns", "external", { externalName: "ext.interwebs.test" })],
  ["services", service("testns", "external-to-service", { externalName: "svc1.testns.svc.cluster.local" })],
  [
    "services",
    service("kube-system", "kubedns", {
      clusterIP: "10.0.0.10",
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    }),
  ],
  // Not exposed: only testns and kube-system are (CoreDNS's `namespaces testns kube-system`).
  ["services", service("other", "hidden", { clusterIP: "10.0.0.99", ports: [{ name: "http", port: 80 }] })],
];

function storeOf(
  objects: [Kind, KObject][],
  namespaces?: string[],
  names?: NameOptions,
): { store: Store; records: Records } {
  const kinds: Kind[] = ["services", "endpointslices", "endpoints", "namespaces"];
  const store = new Store({ zones: [ZONE], waitFor: kinds, names });
  for (const kind of kinds) {
    store.listStart(kind);
    for (const [k, obj] of objects) {
      const ns = obj.metadata.namespace ?? obj.metadata.name;
      if (k === kind && (namespaces === undefined || namespaces.includes(ns)))
        store.apply(kind, "ADDED", obj);
    }
    store.listDone(kind);
  }
  // The name server's address is this server's own, as CoreDNS's test gives it (k.localIPs).
  const records = new Records(store, { zones: [ZONE], ttl: 5, pods: "insecure", localIPs: ["10.0.0.10"] });
  return { store, records };
}

/** The whole transfer, SOA to SOA. */
function transfer(store: Store, records: Records, zone = ZONE): RR[] {
  const offer = kubernetesTransferer(store, records).transfer(zone);
  assert.ok(offer !== undefined && !("unavailable" in offer), `${zone} is offered`);
  return [offer.soa, ...[...offer.records()].flat(), offer.soa];
}

const SOA =
  /^cluster\.local\.\t5\tIN\tSOA\tns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 5$/;

// CoreDNS's expected zone (xfr_test.go's expectedZone), in its order, each record once: CoreDNS sends
// the SRV record to dup-name twice, once per address; a zone holds a record once (RFC 2181 5).
const EXPECTED = `
cluster.local.	5	IN	NS	ns.dns.cluster.local.
ns.dns.cluster.local.	5	IN	A	10.0.0.10
external.testns.svc.cluster.local.	5	IN	CNAME	ext.interwebs.test.
external-to-service.testns.svc.cluster.local.	5	IN	CNAME	svc1.testns.svc.cluster.local.
hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.2
172-0-0-2.hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.2
_http._tcp.hdls1.testns.svc.cluster.local.	5	IN	SRV	0 16 80 172-0-0-2.hdls1.testns.svc.cluster.local.
hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.3
172-0-0-3.hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.3
_http._tcp.hdls1.testns.svc.cluster.local.	5	IN	SRV	0 16 80 172-0-0-3.hdls1.testns.svc.cluster.local.
hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.4
dup-name.hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.4
_http._tcp.hdls1.testns.svc.cluster.local.	5	IN	SRV	0 16 80 dup-name.hdls1.testns.svc.cluster.local.
hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.5
dup-name.hdls1.testns.svc.cluster.local.	5	IN	A	172.0.0.5
hdls1.testns.svc.cluster.local.	5	IN	AAAA	5678:abcd::1
5678-abcd--1.hdls1.testns.svc.cluster.local.	5	IN	AAAA	5678:abcd::1
_http._tcp.hdls1.testns.svc.cluster.local.	5	IN	SRV	0 16 80 5678-abcd--1.hdls1.testns.svc.cluster.local.
hdls1.testns.svc.cluster.local.	5	IN	AAAA	5678:abcd::2
5678-abcd--2.hdls1.testns.svc.cluster.local.	5	IN	AAAA	5678:abcd::2
_http._tcp.hdls1.testns.svc.cluster.local.	5	IN	SRV	0 16 80 5678-abcd--2.hdls1.testns.svc.cluster.local.
hdlsprtls.testns.svc.cluster.local.	5	IN	A	172.0.0.20
172-0-0-20.hdlsprtls.testns.svc.cluster.local.	5	IN	A	172.0.0.20
kubedns.kube-system.svc.cluster.local.	5	IN	A	10.0.0.10
kubedns.kube-system.svc.cluster.local.	5	IN	SRV	0 100 53 kubedns.kube-system.svc.cluster.local.
_dns._udp.kubedns.kube-system.svc.cluster.local.	5	IN	SRV	0 100 53 kubedns.kube-system.svc.cluster.local.
svc-dual-stack.testns.svc.cluster.local.	5	IN	A	10.0.0.3
svc-dual-stack.testns.svc.cluster.local.	5	IN	AAAA	10::3
svc-dual-stack.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svc-dual-stack.testns.svc.cluster.local.
_http._tcp.svc-dual-stack.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svc-dual-stack.testns.svc.cluster.local.
svc1.testns.svc.cluster.local.	5	IN	A	10.0.0.1
svc1.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svc1.testns.svc.cluster.local.
_http._tcp.svc1.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svc1.testns.svc.cluster.local.
svc6.testns.svc.cluster.local.	5	IN	AAAA	1234:abcd::1
svc6.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svc6.testns.svc.cluster.local.
_http._tcp.svc6.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svc6.testns.svc.cluster.local.
svcempty.testns.svc.cluster.local.	5	IN	A	10.0.0.1
svcempty.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svcempty.testns.svc.cluster.local.
_http._tcp.svcempty.testns.svc.cluster.local.	5	IN	SRV	0 100 80 svcempty.testns.svc.cluster.local.
`;

const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => rrToText(parseRRText(l)));

/** Every name a service publishes (the store's own list, footprint.ts), absolute. */
function publishedNames(store: Store): string[] {
  const names = [ZONE, join("ns.dns", ZONE)];
  for (const svc of store.services()) {
    if (!store.namespaceExposed(svc.ns)) continue;
    for (const rel of footprint(store.names, svc, store.endpoints(svc)).names.keys())
      names.push(join(rel, ZONE));
  }
  return names;
}

const ASKED = [Type.A, Type.AAAA, Type.CNAME, Type.SRV, Type.NS, Type.TXT, Type.PTR, Type.MX];

/** A record as compared with the answers: an SRV record without its weight, which CoreDNS's transfer
 * makes apart from its answers. */
const unweighed = (rr: RR) => rrToText(rr).replace(/^(\S+\t\d+\tIN\tSRV\t\d+) \d+ /, "$1 - ");

/** The transfer holds the records the answers hold: for every name a service publishes and every
 * type, the answer's records are the transfer's records of that name and type, SRV records compared
 * without their weight, except the SRV records at a headless service's own name, which CoreDNS
 * answers and does not transfer. */
function assertSameAsAnswers(store: Store, records: Records): void {
  const xfr = transfer(store, records).slice(1, -1);
  const byNameType = new Map<string, string[]>();
  for (const rr of xfr) {
    const key = `${rr.name} ${rr.type}`;
    byNameType.set(key, [...(byNameType.get(key) ?? []), unweighed(rr)]);
  }
  const headless = new Set(
    [...store.services()].filter((s) => s.headless).map((s) => join(`${s.name}.${s.ns}.svc`, ZONE)),
  );
  const names = new Set([...publishedNames(store), ...xfr.map((rr) => rr.name)]);
  for (const name of names) {
    for (const type of ASKED) {
      if (type === Type.SRV && headless.has(name)) continue;
      const a = records.answer(ZONE, name, type);
      const answered = a.answer.filter((rr) => rr.name === name && rr.type === type).map(unweighed);
      const sent = byNameType.get(`${name} ${type}`) ?? [];
      assert.deepEqual([...sent].sort(), answered.sort(), `${name} type ${type}`);
    }
  }
}

describe("kubernetes transfer", () => {
  it("sends CoreDNS's zone: SOA, NS and the name server, services sorted by name, SOA", () => {
    const { store, records } = storeOf(COREDNS_FIXTURE, ["testns", "kube-system"]);
    const got = transfer(store, records).map(rrToText);
    assert.match(got[0], SOA);
    assert.equal(got.at(-1), got[0]);
    assert.deepEqual(got.slice(1, -1), lines(EXPECTED));
  });

  it("holds exactly what the answers hold", () => {
    const { store, records } = storeOf(COREDNS_FIXTURE);
    assertSameAsAnswers(store, records);
  });

  it("leaves out namespaces that are not exposed, and services that answer NXDOMAIN", () => {
    const objects: [Kind, KObject][] = [
      ...COREDNS_FIXTURE,
      // A headless service without a ready endpoint does not exist (spec 2.4.1).
      ["services", service("testns", "nobody", { headless: true, ports: [{ name: "http", port: 80 }] })],
      ["endpointslices", endpointSlice("testns", "nobody", "nobody-1", [{ ip: "172.0.0.9", ready: false }])],
    ];
    const { store, records } = storeOf(objects);
    const names = transfer(store, records).map((rr) => rr.name);
    assert.ok(names.includes("hidden.other.svc.cluster.local."), "exposed without a namespace filter");
    assert.ok(!names.some((n) => n.includes("nobody")));
    const ignoring = storeOf(objects, undefined, { ignoreEmptyService: true });
    const without = transfer(ignoring.store, ignoring.records).map((rr) => rr.name);
    assert.ok(!without.includes("svcempty.testns.svc.cluster.local."), "ignore empty_service");
    assertSameAsAnswers(ignoring.store, ignoring.records);
  });

  it("merges a headless service's slices, and weighs SRVs over their slice, as CoreDNS does", () => {
    const objects: [Kind, KObject][] = [
      ["namespaces", namespace("web")],
      ["services", service("web", "db", { headless: true, ports: [{ name: "mysql", port: 3306 }] })],
      [
        "endpointslices",
        endpointSlice("web", "db", "db-1", [{ ip: "10.1.0.1", hostname: "db-0" }], {
          ports: [{ name: "mysql", port: 3306 }],
        }),
      ],
      // The same endpoint in a second slice (a slice being replaced), and one more.
      [
        "endpointslices",
        endpointSlice(
          "web",
          "db",
          "db-2",
          [
            { ip: "10.1.0.1", hostname: "db-0" },
            { ip: "10.1.0.2", hostname: "db-1" },
          ],
          { ports: [{ name: "mysql", port: 3306 }] },
        ),
      ],
    ];
    // One slice of one endpoint: 100; the other of two: 50. The record to db-0 goes out once, as the
    // first slice weighs it.
    const { store, records } = storeOf(objects);
    const srv = transfer(store, records)
      .filter((rr) => rr.type === Type.SRV)
      .map(rrToText);
    assert.deepEqual(
      srv,
      lines(`
_mysql._tcp.db.web.svc.cluster.local. 5 IN SRV 0 100 3306 db-0.db.web.svc.cluster.local.
_mysql._tcp.db.web.svc.cluster.local. 5 IN SRV 0 50 3306 db-1.db.web.svc.cluster.local.
`),
    );
    assertSameAsAnswers(store, records);
  });

  it("is not authoritative for reverse zones, zones it does not serve, or names below the apex", () => {
    const kinds: Kind[] = ["services"];
    const store = new Store({ zones: [ZONE, "in-addr.arpa."], waitFor: kinds });
    const records = new Records(store, {
      zones: [ZONE, "in-addr.arpa."],
      ttl: 5,
      pods: "disabled",
    });
    const t = kubernetesTransferer(store, records);
    assert.equal(t.transfer("in-addr.arpa."), undefined);
    assert.equal(t.transfer("example.org."), undefined);
    assert.equal(t.transfer("svc.cluster.local."), undefined);
    // Not synced yet: it holds the zone but must not send it half-empty.
    assert.deepEqual(t.transfer(ZONE), { unavailable: "the kubernetes store has not synced yet" });
  });

  it("makes the records one service at a time", () => {
    const { store, records } = storeOf(COREDNS_FIXTURE, ["testns", "kube-system"]);
    const offer = kubernetesTransferer(store, records).transfer(ZONE);
    assert.ok(offer !== undefined && !("unavailable" in offer));
    const chunks = [...offer.records()];
    // The apex, then one array per service (of the nine in testns and kube-system).
    assert.equal(chunks.length, 1 + 9);
    const service = (name: string) => name.split(".").slice(-6).join(".");
    for (const c of chunks.slice(1)) assert.equal(new Set(c.map((rr) => service(rr.name))).size, 1);
  });
});
