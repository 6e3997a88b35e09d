// CoreDNS's own cases for k8s_external (plugin/k8s_external/external_test.go and apex_test.go), written
// afresh against this store: the same services, the same questions, the same answers. Where CoreDNS's
// tests stub a function (the name servers' addresses), the stub's stand-in here is this server's own
// address, which CoreDNS answers when no service selects it.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Type, rcodeName, typeFromName } from "../../dns/constants.ts";
import { canonical } from "../../dns/name.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import type { Kind, KObject } from "../kubernetes/model/source.ts";
import { Store } from "../kubernetes/store/store.ts";
import { ExternalRecords, type ExternalOptions } from "./records.ts";
import { externaler, type Externaler } from "../kubernetes/external-offer.ts";
import { StartupGate } from "../kubernetes/sync/startup-gate.ts";
import { endpointSlice, namespace, service } from "../../../test/k8s/objects.ts";

const http = [{ name: "http", port: 80 }];

const OBJECTS: [Kind, KObject][] = [
  ["namespaces", namespace("testns")],
  ["services", service("testns", "svc1", { clusterIP: "10.0.0.1", ports: http, externalIPs: ["1.2.3.4"] })],
  ["services", service("testns", "svc6", { clusterIP: "10.0.0.3", ports: http, externalIPs: ["1:2::5"] })],
  [
    "services",
    service("testns", "svc11", {
      type: "LoadBalancer",
      clusterIP: "10.0.0.11",
      ports: http,
      ingress: [{ ip: "2.3.4.5" }],
    }),
  ],
  [
    "services",
    service("testns", "svc12", {
      type: "LoadBalancer",
      clusterIP: "10.0.0.12",
      ports: http,
      ingress: [{ hostname: "dummy.hostname" }],
    }),
  ],
  ["services", service("testns", "svc-headless", { headless: true, ports: http })],
  [
    "endpointslices",
    endpointSlice(
      "testns",
      "svc-headless",
      "svc-headless-1",
      [
        { ip: "1.2.3.4", hostname: "endpoint-svc-0" },
        { ip: "1.2.3.5", hostname: "endpoint-svc-1" },
      ],
      { ports: http },
    ),
  ],
  // Not CoreDNS's: a cluster IP service without external addresses publishes nothing here.
  ["services", service("testns", "internal", { clusterIP: "10.0.0.20", ports: http })],
];

/** The kubernetes plugin's Externaler of a store, with this server's own addresses. */
function cluster(store: Store, ownIPs: readonly string[] = ["127.0.0.1"]): Externaler {
  return externaler(store, new StartupGate({ store, timeoutMs: 0, startedAt: () => 0 }), ownIPs);
}

function fixture(o: Partial<ExternalOptions> = {}, extra: [Kind, KObject][] = [], localIPs?: string[]) {
  const kinds: Kind[] = ["services", "endpointslices", "namespaces"];
  const store = new Store({ zones: ["cluster.local."], waitFor: kinds, localIPs });
  for (const kind of kinds) {
    store.listStart(kind);
    for (const [k, obj] of [...OBJECTS, ...extra]) if (k === kind) store.apply(kind, "ADDED", obj);
    store.listDone(kind);
  }
  return new ExternalRecords(cluster(store), {
    zones: ["example.com.", "in-addr.arpa."],
    apex: "dns",
    ttl: 5,
    headless: true,
    ...o,
  });
}

interface Case {
  q: string;
  type: string;
  rcode: "NOERROR" | "NXDOMAIN";
  answer?: string[];
  extra?: string[];
}

const text = (lines: readonly string[]) => lines.map((l) => rrToText(parseRRText(l))).sort();
const SOA =
  /^example\.com\.\t5\tIN\tSOA\tns1\.dns\.example\.com\. hostmaster\.dns\.example\.com\. \d+ 7200 1800 86400 5$/;

function check(r: ExternalRecords, c: Case, soa = SOA): void {
  const qname = canonical(c.q);
  const zone = r.zoneOf(qname)!;
  const a = r.answer(zone, qname, typeFromName(c.type)!);
  const what = `${c.q} ${c.type}`;
  assert.equal(rcodeName(a.rcode), c.rcode, `${what}: rcode`);
  assert.deepEqual(a.answer.map(rrToText).sort(), text(c.answer ?? []), `${what}: answer`);
  assert.deepEqual(a.additional.map(rrToText).sort(), text(c.extra ?? []), `${what}: extra`);
  if ((c.answer ?? []).length === 0) {
    assert.equal(a.authority.length, 1, `${what}: the SOA in the authority section`);
    if (zone === "example.com.") assert.match(rrToText(a.authority[0]), soa);
  } else assert.deepEqual(a.authority, [], `${what}: no authority`);
}

function table(title: string, r: () => ExternalRecords, cases: Case[], soa = SOA): void {
  describe(title, () => {
    const records = r();
    for (const c of cases)
      it(`${c.q} ${c.type} -> ${c.rcode} ${(c.answer ?? []).length}`, () => check(records, c, soa));
  });
}

table("k8s_external: CoreDNS's external_test.go", () => fixture(), [
  {
    q: "svc1.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["svc1.testns.example.com. 5 IN A 1.2.3.4"],
  },
  {
    q: "svc1.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["svc1.testns.example.com. 5 IN SRV 0 100 80 svc1.testns.example.com."],
    extra: ["svc1.testns.example.com. 5 IN A 1.2.3.4"],
  },
  // SRV of a protocol that is neither udp nor tcp (and no wildcard: "*" is a label like any other).
  { q: "*._not-udp-or-tcp.svc1.testns.example.com.", type: "SRV", rcode: "NXDOMAIN" },
  {
    q: "_http._tcp.svc1.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["_http._tcp.svc1.testns.example.com. 5 IN SRV 0 100 80 svc1.testns.example.com."],
    extra: ["svc1.testns.example.com. 5 IN A 1.2.3.4"],
  },
  // An A record but no AAAA record: NODATA.
  { q: "svc1.testns.example.com.", type: "AAAA", rcode: "NOERROR" },
  { q: "svc0.testns.example.com.", type: "AAAA", rcode: "NXDOMAIN" },
  { q: "svc0.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "svc0.svc-nons.example.com.", type: "A", rcode: "NXDOMAIN" },
  {
    q: "svc6.testns.example.com.",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["svc6.testns.example.com. 5 IN AAAA 1:2::5"],
  },
  {
    q: "_http._tcp.svc6.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["_http._tcp.svc6.testns.example.com. 5 IN SRV 0 100 80 svc6.testns.example.com."],
    extra: ["svc6.testns.example.com. 5 IN AAAA 1:2::5"],
  },
  {
    q: "svc6.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["svc6.testns.example.com. 5 IN SRV 0 100 80 svc6.testns.example.com."],
    extra: ["svc6.testns.example.com. 5 IN AAAA 1:2::5"],
  },
  { q: "testns.example.com.", type: "A", rcode: "NOERROR" },
  // A load balancer's ingress address.
  {
    q: "svc11.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["svc11.testns.example.com. 5 IN A 2.3.4.5"],
  },
  {
    q: "_http._tcp.svc11.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["_http._tcp.svc11.testns.example.com. 5 IN SRV 0 100 80 svc11.testns.example.com."],
    extra: ["svc11.testns.example.com. 5 IN A 2.3.4.5"],
  },
  {
    q: "svc11.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["svc11.testns.example.com. 5 IN SRV 0 100 80 svc11.testns.example.com."],
    extra: ["svc11.testns.example.com. 5 IN A 2.3.4.5"],
  },
  // A load balancer known by its hostname: a CNAME, and SRV records to that hostname.
  {
    q: "svc12.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["svc12.testns.example.com. 5 IN CNAME dummy.hostname."],
  },
  {
    q: "_http._tcp.svc12.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["_http._tcp.svc12.testns.example.com. 5 IN SRV 0 100 80 dummy.hostname."],
  },
  {
    q: "svc12.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: ["svc12.testns.example.com. 5 IN SRV 0 100 80 dummy.hostname."],
  },
  // A headless service's endpoints (the `headless` option).
  {
    q: "svc-headless.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: [
      "svc-headless.testns.example.com. 5 IN A 1.2.3.4",
      "svc-headless.testns.example.com. 5 IN A 1.2.3.5",
    ],
  },
  {
    q: "svc-headless.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-0.svc-headless.testns.example.com.",
      "svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-1.svc-headless.testns.example.com.",
    ],
    extra: [
      "endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4",
      "endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5",
    ],
  },
  {
    q: "_http._tcp.svc-headless.testns.example.com.",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "_http._tcp.svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-0.svc-headless.testns.example.com.",
      "_http._tcp.svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-1.svc-headless.testns.example.com.",
    ],
    extra: [
      "endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4",
      "endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5",
    ],
  },
  {
    q: "endpoint-svc-0.svc-headless.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4"],
  },
  {
    q: "endpoint-svc-1.svc-headless.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5"],
  },
]);

table("k8s_external: CoreDNS's apex_test.go", () => fixture(), [
  {
    q: "example.com.",
    type: "NS",
    rcode: "NOERROR",
    answer: ["example.com. 5 IN NS ns1.dns.example.com."],
    extra: ["ns1.dns.example.com. 5 IN A 127.0.0.1"],
  },
  { q: "example.com.", type: "SRV", rcode: "NOERROR" },
  { q: "dns.example.com.", type: "SRV", rcode: "NOERROR" },
  { q: "dns.example.com.", type: "NS", rcode: "NOERROR" },
  { q: "ns1.dns.example.com.", type: "SRV", rcode: "NOERROR" },
  { q: "ns1.dns.example.com.", type: "NS", rcode: "NOERROR" },
  { q: "ns1.dns.example.com.", type: "AAAA", rcode: "NOERROR" },
  {
    q: "ns1.dns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["ns1.dns.example.com. 5 IN A 127.0.0.1"],
  },
  { q: "ns2.dns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "a.ns1.dns.example.com.", type: "A", rcode: "NXDOMAIN" },
]);

table("k8s_external: beyond CoreDNS's cases", () => fixture(), [
  // Services without external addresses, ExternalName services and too many labels: nothing.
  { q: "internal.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "_http._tcp.svc1.testns.example.com.", type: "A", rcode: "NOERROR" },
  { q: "_tcp.svc1.testns.example.com.", type: "SRV", rcode: "NOERROR" },
  { q: "_udp.svc1.testns.example.com.", type: "SRV", rcode: "NXDOMAIN" },
  { q: "_https._tcp.svc1.testns.example.com.", type: "SRV", rcode: "NXDOMAIN" },
  { q: "x.svc1.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "endpoint-svc-2.svc-headless.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "a.b._http._tcp.svc1.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "svc1.testns.example.com.", type: "TXT", rcode: "NOERROR" },
  // PTR for external addresses, in a reverse zone among the plugin's zones.
  {
    q: "4.3.2.1.in-addr.arpa.",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["4.3.2.1.in-addr.arpa. 5 IN PTR svc1.testns.example.com."],
  },
  {
    q: "5.4.3.2.in-addr.arpa.",
    type: "PTR",
    rcode: "NOERROR",
    answer: ["5.4.3.2.in-addr.arpa. 5 IN PTR svc11.testns.example.com."],
  },
  { q: "1.0.0.10.in-addr.arpa.", type: "PTR", rcode: "NXDOMAIN" },
  { q: "4.3.2.1.in-addr.arpa.", type: "A", rcode: "NOERROR" },
]);

table("k8s_external: without `headless`", () => fixture({ headless: false }), [
  { q: "svc-headless.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  { q: "endpoint-svc-0.svc-headless.testns.example.com.", type: "A", rcode: "NXDOMAIN" },
  {
    q: "svc1.testns.example.com.",
    type: "A",
    rcode: "NOERROR",
    answer: ["svc1.testns.example.com. 5 IN A 1.2.3.4"],
  },
]);

table(
  "k8s_external: apex and ttl options",
  () => fixture({ apex: "ext", ttl: 30 }),
  [
    {
      q: "example.com.",
      type: "NS",
      rcode: "NOERROR",
      answer: ["example.com. 30 IN NS ns1.ext.example.com."],
      extra: ["ns1.ext.example.com. 30 IN A 127.0.0.1"],
    },
    {
      q: "svc1.testns.example.com.",
      type: "A",
      rcode: "NOERROR",
      answer: ["svc1.testns.example.com. 30 IN A 1.2.3.4"],
    },
    { q: "ns1.dns.example.com.", type: "A", rcode: "NXDOMAIN" },
  ],
  /^example\.com\.\t30\tIN\tSOA\tns1\.ext\.example\.com\. hostmaster\.ext\.example\.com\. \d+ 7200 1800 86400 30$/,
);

describe("k8s_external: SOA, the name servers, the client's spelling", () => {
  it("the SOA is CoreDNS's: ns1.APEX and hostmaster.APEX of the zone, the TTL as minimum", () => {
    const r = fixture();
    const a = r.answer("example.com.", "example.com.", Type.SOA);
    assert.match(rrToText(a.answer[0]), SOA);
    assert.match(
      rrToText(fixture({ apex: "ext" }).soa("example.com.")),
      /ns1\.ext\.example\.com\. hostmaster\.ext\.example\.com\./,
    );
  });

  it("ns1.APEX has the external addresses of the services that select this server", () => {
    const own: [Kind, KObject][] = [
      [
        "services",
        service("testns", "dns", {
          type: "LoadBalancer",
          clusterIP: "10.0.0.53",
          ports: [53],
          ingress: [{ ip: "203.0.113.53" }],
        }),
      ],
      ["endpointslices", endpointSlice("testns", "dns", "dns-1", ["10.244.0.53"], { ports: [{ port: 53 }] })],
    ];
    const r = fixture({}, own, ["10.244.0.53"]);
    const a = r.answer("example.com.", "ns1.dns.example.com.", Type.A);
    assert.deepEqual(a.answer.map(rrToText), [
      rrToText(parseRRText("ns1.dns.example.com. 5 IN A 203.0.113.53")),
    ]);
  });

  it("SRV targets keep the client's spelling of the zone; such an answer is not cached", () => {
    const r = fixture();
    const a = r.answer("example.com.", "_http._tcp.svc1.testns.example.com.", Type.SRV, "Example.COM.");
    assert.deepEqual(
      a.answer.map((rr) => (rr.data as { target: string }).target),
      ["svc1.testns.Example.COM."],
    );
    assert.equal(a.uncacheable, true);
    assert.equal(
      r.answer("example.com.", "svc1.testns.example.com.", Type.A, "Example.COM.").uncacheable,
      false,
    );
  });

  it("needs a forward zone", () => {
    const store = new Store({ zones: ["cluster.local."], waitFor: [] });
    const o = { zones: ["in-addr.arpa."], apex: "dns", ttl: 5, headless: false };
    assert.throws(() => new ExternalRecords(cluster(store), o));
  });
});
