// Multi-cluster services: the answers of a multicluster zone (the examples of KEP-1645's DNS
// specification, and CoreDNS's `kubernetes { multicluster }` behaviour), and the names each change of
// a ServiceImport or an imported EndpointSlice hands to the answer cache.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RR } from "../../../dns/message.ts";
import { rcodeName, typeFromName } from "../../../dns/constants.ts";
import { canonical } from "../../../dns/name.ts";
import { parseRRText, rrToText } from "../../../dns/text.ts";
import type { Kind, KObject } from "../model/source.ts";
import { Store } from "./store.ts";
import { Records } from "../answers/records.ts";
import { Multicluster } from "./multicluster.ts";
import { explain } from "../answers/explain.ts";
import { kubernetesTransferer } from "../answers/xfr.ts";
import {
  endpointSlice,
  importedSlice,
  namespace,
  service,
  serviceImport,
} from "../../../../test/k8s/objects.ts";

const ZONES = ["cluster.local.", "clusterset.local.", "in-addr.arpa.", "ip6.arpa."];

const FIXTURE: [Kind, KObject][] = [
  ["namespaces", namespace("test")],
  // The local Service of the same name: cluster.local answers it, clusterset.local does not.
  [
    "services",
    service("test", "myservice", { clusterIP: "10.96.0.42", ports: [{ name: "https", port: 443 }] }),
  ],
  [
    "serviceimports",
    serviceImport("test", "myservice", {
      ips: ["10.42.42.42"],
      ports: [{ name: "https", port: 443 }, 8080],
      clusters: ["cluster-a", "cluster-b"],
    }),
  ],
  [
    "serviceimports",
    serviceImport("test", "dual", { ips: ["10.42.0.7", "2001:db8::7"], ports: [{ name: "http", port: 80 }] }),
  ],
  ["serviceimports", serviceImport("test", "pending", { ports: [{ name: "http", port: 80 }] })],
  [
    "serviceimports",
    serviceImport("test", "headless", {
      type: "Headless",
      ports: [{ name: "https", port: 443 }],
      clusters: ["cluster-a", "cluster-b"],
    }),
  ],
  [
    "endpointslices",
    importedSlice(
      "test",
      "headless",
      "headless-cluster-a-1",
      [
        { ip: "10.3.0.100", hostname: "my-pet-1" },
        { ip: "10.3.0.101", hostname: "my-pet-2" },
        { ip: "10.3.0.102", hostname: "my-pet-3", ready: false },
      ],
      { cluster: "cluster-a", ports: [{ name: "https", port: 443 }] },
    ),
  ],
  [
    "endpointslices",
    importedSlice(
      "test",
      "headless",
      "headless-cluster-b-1",
      [{ ip: "10.4.0.100", hostname: "my-pet-1" }, "10.4.0.101"],
      { cluster: "cluster-b", ports: [{ name: "https", port: 443 }] },
    ),
  ],
  [
    "endpointslices",
    importedSlice(
      "test",
      "headless",
      "headless-cluster-b-v6",
      [{ ip: "2001:db8::1", hostname: "my-pet-1" }],
      { cluster: "cluster-b", ports: [{ name: "https", port: 443 }], addressType: "IPv6" },
    ),
  ],
  // Imported, but no endpoint is ready: the headless import does not exist.
  [
    "serviceimports",
    serviceImport("other", "idle", { type: "Headless", ports: [{ name: "http", port: 80 }] }),
  ],
  [
    "endpointslices",
    importedSlice("other", "idle", "idle-a", [{ ip: "10.5.0.1", ready: false }], {
      cluster: "cluster-a",
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  // A local headless Service's slice: nothing to do with the imports.
  ["services", service("test", "local-db", { headless: true })],
  [
    "endpointslices",
    endpointSlice("test", "local-db", "local-db-1", [{ ip: "10.244.0.9", hostname: "db-0" }]),
  ],
];

const KINDS: Kind[] = ["services", "endpointslices", "namespaces", "serviceimports"];

function fixture(objects = FIXTURE): {
  store: Store;
  records: Records;
  mc: Multicluster;
  changes: (readonly string[] | "all")[];
} {
  const mc = new Multicluster(["clusterset.local."]);
  const changes: (readonly string[] | "all")[] = [];
  const store = new Store({
    zones: ZONES,
    waitFor: KINDS,
    multicluster: mc,
    onChange: (names) => changes.push(names),
  });
  for (const kind of KINDS) {
    store.listStart(kind);
    for (const [k, obj] of objects) if (k === kind) store.apply(kind, "ADDED", obj);
    store.listDone(kind);
  }
  const records = new Records(store, {
    zones: ZONES,
    ttl: 5,
    pods: "insecure",
    multicluster: mc,
  });
  return { store, records, mc, changes };
}

interface Case {
  q: string;
  type: string;
  rcode: "NOERROR" | "NXDOMAIN";
  answer?: string[];
  additional?: string[];
}

const text = (lines: readonly string[]) => lines.map((l) => rrToText(parseRRText(l))).sort();

function check(r: Records, c: Case): void {
  const qname = canonical(c.q);
  const zone = r.zoneOf(qname)!;
  const a = r.answer(zone, qname, typeFromName(c.type)!);
  const what = `${c.q} ${c.type}`;
  assert.equal(rcodeName(a.rcode), c.rcode, `${what}: rcode`);
  assert.deepEqual(a.answer.map(rrToText).sort(), text(c.answer ?? []), `${what}: answer`);
  assert.deepEqual(a.additional.map(rrToText).sort(), text(c.additional ?? []), `${what}: additional`);
}

const CASES: Case[] = [
  // 2.3.1: the clusterset IP.
  {
    q: "myservice.test.svc.clusterset.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["myservice.test.svc.clusterset.local. 5 IN A 10.42.42.42"],
  },
  { q: "myservice.test.svc.clusterset.local", type: "AAAA", rcode: "NOERROR" },
  {
    q: "dual.test.svc.clusterset.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["dual.test.svc.clusterset.local. 5 IN AAAA 2001:db8::7"],
  },
  {
    q: "dual.test.svc.clusterset.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["dual.test.svc.clusterset.local. 5 IN A 10.42.0.7"],
  },
  // An import whose clusterset IP is not allocated yet exists, without addresses.
  { q: "pending.test.svc.clusterset.local", type: "A", rcode: "NOERROR" },
  // The local Service answers in cluster.local only; the import in clusterset.local only.
  {
    q: "myservice.test.svc.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["myservice.test.svc.cluster.local. 5 IN A 10.96.0.42"],
  },
  { q: "local-db.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  { q: "headless.test.svc.cluster.local", type: "A", rcode: "NXDOMAIN" },
  // 2.3.2: SRV per named port, to the service's name; an unnamed port has none.
  {
    q: "_https._tcp.myservice.test.svc.clusterset.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "_https._tcp.myservice.test.svc.clusterset.local. 5 IN SRV 0 100 443 myservice.test.svc.clusterset.local.",
    ],
    additional: ["myservice.test.svc.clusterset.local. 5 IN A 10.42.42.42"],
  },
  { q: "_tcp.myservice.test.svc.clusterset.local", type: "SRV", rcode: "NOERROR" },
  // SRV at the import's own name, as CoreDNS answers it (an empty port and protocol match every
  // port, named or not).
  {
    q: "myservice.test.svc.clusterset.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "myservice.test.svc.clusterset.local. 5 IN SRV 0 50 443 myservice.test.svc.clusterset.local.",
      "myservice.test.svc.clusterset.local. 5 IN SRV 0 50 8080 myservice.test.svc.clusterset.local.",
    ],
    additional: ["myservice.test.svc.clusterset.local. 5 IN A 10.42.42.42"],
  },
  { q: "_http._tcp.myservice.test.svc.clusterset.local", type: "SRV", rcode: "NXDOMAIN" },
  { q: "_udp.myservice.test.svc.clusterset.local", type: "SRV", rcode: "NXDOMAIN" },
  // 2.3.4: no name for one cluster's backends of a ClusterSetIP import.
  { q: "cluster-a.myservice.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  // 2.4.1: a headless import's ready endpoints, every cluster's.
  {
    q: "headless.test.svc.clusterset.local",
    type: "A",
    rcode: "NOERROR",
    answer: [
      "headless.test.svc.clusterset.local. 5 IN A 10.3.0.100",
      "headless.test.svc.clusterset.local. 5 IN A 10.3.0.101",
      "headless.test.svc.clusterset.local. 5 IN A 10.4.0.100",
      "headless.test.svc.clusterset.local. 5 IN A 10.4.0.101",
    ],
  },
  {
    q: "headless.test.svc.clusterset.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["headless.test.svc.clusterset.local. 5 IN AAAA 2001:db8::1"],
  },
  // ... and per cluster, by hostname (or dashed address).
  {
    q: "my-pet-1.cluster-a.headless.test.svc.clusterset.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["my-pet-1.cluster-a.headless.test.svc.clusterset.local. 5 IN A 10.3.0.100"],
  },
  {
    q: "my-pet-1.cluster-b.headless.test.svc.clusterset.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["my-pet-1.cluster-b.headless.test.svc.clusterset.local. 5 IN A 10.4.0.100"],
  },
  {
    q: "my-pet-1.cluster-b.headless.test.svc.clusterset.local",
    type: "AAAA",
    rcode: "NOERROR",
    answer: ["my-pet-1.cluster-b.headless.test.svc.clusterset.local. 5 IN AAAA 2001:db8::1"],
  },
  {
    q: "10-4-0-101.cluster-b.headless.test.svc.clusterset.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["10-4-0-101.cluster-b.headless.test.svc.clusterset.local. 5 IN A 10.4.0.101"],
  },
  { q: "my-pet-2.cluster-b.headless.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  // Not ready: no name.
  { q: "my-pet-3.cluster-a.headless.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  // 2.4.4: the cluster's own name holds nothing; above its endpoints' names it exists (RFC 8020).
  { q: "cluster-a.headless.test.svc.clusterset.local", type: "A", rcode: "NOERROR" },
  { q: "cluster-c.headless.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  // 2.4.2: SRV per ready endpoint and named port, N x M, to the per-cluster names. Weighed as CoreDNS
  // weighs them: every address counts (my-pet-1 of cluster-b has two), 100 / 5.
  {
    q: "_https._tcp.headless.test.svc.clusterset.local",
    type: "SRV",
    rcode: "NOERROR",
    answer: [
      "_https._tcp.headless.test.svc.clusterset.local. 5 IN SRV 0 20 443 my-pet-1.cluster-a.headless.test.svc.clusterset.local.",
      "_https._tcp.headless.test.svc.clusterset.local. 5 IN SRV 0 20 443 my-pet-2.cluster-a.headless.test.svc.clusterset.local.",
      "_https._tcp.headless.test.svc.clusterset.local. 5 IN SRV 0 20 443 my-pet-1.cluster-b.headless.test.svc.clusterset.local.",
      "_https._tcp.headless.test.svc.clusterset.local. 5 IN SRV 0 20 443 10-4-0-101.cluster-b.headless.test.svc.clusterset.local.",
    ],
    additional: [
      "my-pet-1.cluster-a.headless.test.svc.clusterset.local. 5 IN A 10.3.0.100",
      "my-pet-2.cluster-a.headless.test.svc.clusterset.local. 5 IN A 10.3.0.101",
      "my-pet-1.cluster-b.headless.test.svc.clusterset.local. 5 IN A 10.4.0.100",
      "my-pet-1.cluster-b.headless.test.svc.clusterset.local. 5 IN AAAA 2001:db8::1",
      "10-4-0-101.cluster-b.headless.test.svc.clusterset.local. 5 IN A 10.4.0.101",
    ],
  },
  // A headless import without a ready endpoint: NXDOMAIN (2.4.1), its namespace still exists.
  { q: "idle.other.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  { q: "other.svc.clusterset.local", type: "A", rcode: "NOERROR" },
  { q: "test.svc.clusterset.local", type: "A", rcode: "NOERROR" },
  { q: "nowhere.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  { q: "nothere.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  // 2.2: the schema version of the multicluster specification.
  {
    q: "dns-version.clusterset.local",
    type: "TXT",
    rcode: "NOERROR",
    answer: ['dns-version.clusterset.local. 28800 IN TXT "1.0.0"'],
  },
  {
    q: "dns-version.cluster.local",
    type: "TXT",
    rcode: "NOERROR",
    answer: ['dns-version.cluster.local. 28800 IN TXT "1.1.0"'],
  },
  // No pod records in the multicluster zone.
  { q: "10-244-0-9.test.pod.clusterset.local", type: "A", rcode: "NXDOMAIN" },
  {
    q: "10-244-0-9.test.pod.cluster.local",
    type: "A",
    rcode: "NOERROR",
    answer: ["10-244-0-9.test.pod.cluster.local. 5 IN A 10.244.0.9"],
  },
];

describe("multicluster: the answers of clusterset.local", () => {
  const { records } = fixture();
  for (const c of CASES)
    it(`${c.q} ${c.type} -> ${c.rcode} ${(c.answer ?? []).length}`, () => check(records, c));

  it("explains a multicluster name as one, not as the local Service of that name", () => {
    const { store } = fixture();
    const lines = explain(
      store,
      records.options,
      "clusterset.local.",
      "myservice.test.svc.clusterset.local.",
    );
    assert.deepEqual(lines, ["a multicluster zone: its names come from ServiceImports"]);
  });

  it("keeps PTR, the name server and the SOA's names in the cluster's own zone", () => {
    assert.equal(records.primary, "cluster.local.");
    assert.equal(
      rcodeName(records.answer("in-addr.arpa.", "42.42.42.10.in-addr.arpa.", 12).rcode),
      "NXDOMAIN",
    );
  });
});

describe("multicluster: changes", () => {
  it("an import, its slices and its namespace change together; the names reach the answer cache", () => {
    const { store, records, changes } = fixture();
    changes.length = 0;
    store.apply(
      "serviceimports",
      "ADDED",
      serviceImport("fresh", "api", { type: "Headless", ports: [{ name: "grpc", port: 9000 }] }),
    );
    // No ready endpoint yet: still NXDOMAIN, but its namespace now exists.
    check(records, { q: "api.fresh.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" });
    check(records, { q: "fresh.svc.clusterset.local", type: "A", rcode: "NOERROR" });
    store.apply(
      "endpointslices",
      "ADDED",
      importedSlice("fresh", "api", "api-east", [{ ip: "10.9.0.1", hostname: "api-0" }], {
        cluster: "east",
        ports: [{ name: "grpc", port: 9000 }],
      }),
    );
    check(records, {
      q: "api.fresh.svc.clusterset.local",
      type: "A",
      rcode: "NOERROR",
      answer: ["api.fresh.svc.clusterset.local. 5 IN A 10.9.0.1"],
    });
    const names = changes.flatMap((c) => (c === "all" ? [] : c));
    for (const n of [
      "api.fresh.svc.clusterset.local.",
      "fresh.svc.clusterset.local.",
      "_grpc._tcp.api.fresh.svc.clusterset.local.",
      "east.api.fresh.svc.clusterset.local.",
      "api-0.east.api.fresh.svc.clusterset.local.",
    ]) {
      assert.ok(names.includes(n), `${n} was invalidated`);
    }
    // The SOA serial moved too: the zone apexes are in every change.
    assert.ok(names.includes("clusterset.local."));
  });

  it("a relist drops the imports and imported slices it no longer has", () => {
    const { store, records } = fixture();
    for (const kind of ["serviceimports", "endpointslices"] as const) {
      store.listStart(kind);
      store.listDone(kind);
    }
    check(records, { q: "myservice.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" });
    check(records, { q: "headless.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" });
    assert.equal(store.stats().objects.serviceimports, 0);
  });

  it("a deleted slice and a deleted import take their names with them", () => {
    const { store, records } = fixture();
    store.apply(
      "endpointslices",
      "DELETED",
      importedSlice("test", "headless", "headless-cluster-a-1", [], {
        cluster: "cluster-a",
        ports: [{ name: "https", port: 443 }],
      }),
    );
    check(records, {
      q: "my-pet-1.cluster-a.headless.test.svc.clusterset.local",
      type: "A",
      rcode: "NXDOMAIN",
    });
    check(records, {
      q: "my-pet-1.cluster-b.headless.test.svc.clusterset.local",
      type: "A",
      rcode: "NOERROR",
      answer: ["my-pet-1.cluster-b.headless.test.svc.clusterset.local. 5 IN A 10.4.0.100"],
    });
    store.apply("serviceimports", "DELETED", serviceImport("test", "myservice"));
    check(records, { q: "myservice.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" });
    // The local Service is untouched.
    check(records, {
      q: "myservice.test.svc.cluster.local",
      type: "A",
      rcode: "NOERROR",
      answer: ["myservice.test.svc.cluster.local. 5 IN A 10.96.0.42"],
    });
  });

  it("an import of a type the API does not have is not published", () => {
    const bad = serviceImport("test", "odd");
    bad.spec!.type = "LoadBalancer";
    const { records } = fixture([...FIXTURE, ["serviceimports", bad]]);
    check(records, { q: "odd.test.svc.clusterset.local", type: "A", rcode: "NXDOMAIN" });
  });
});

// CoreDNS's multicluster transfer (xfr_test.go, TestKubernetesMultiClusterAXFR): its ServiceImports and
// their slices, all from cluster1, written again here. Its hdls1 is one subset of both families; as
// EndpointSlices (one family each) it is two, and the SRV records are weighed over each (4 and 2
// addresses) where CoreDNS's table has 6.
const COREDNS_IMPORTS: [Kind, KObject][] = [
  ["namespaces", namespace("testns")],
  ["namespaces", namespace("kube-system")],
  [
    "serviceimports",
    serviceImport("kube-system", "kubedns", {
      ips: ["10.0.0.10"],
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    }),
  ],
  [
    "serviceimports",
    serviceImport("testns", "svc1", { ips: ["10.0.0.1"], ports: [{ name: "http", port: 80 }] }),
  ],
  [
    "serviceimports",
    serviceImport("testns", "svcempty", { ips: ["10.0.0.1"], ports: [{ name: "http", port: 80 }] }),
  ],
  [
    "serviceimports",
    serviceImport("testns", "svc6", { ips: ["1234:abcd::1"], ports: [{ name: "http", port: 80 }] }),
  ],
  [
    "serviceimports",
    serviceImport("testns", "svc-dual-stack", {
      ips: ["10.0.0.3", "10::3"],
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  ["serviceimports", serviceImport("testns", "hdls1", { type: "Headless" })],
  ["serviceimports", serviceImport("testns", "hdlsprtls", { type: "Headless" })],
  [
    "endpointslices",
    importedSlice("kube-system", "kubedns", "kubedns-1", ["172.0.0.100"], {
      cluster: "cluster1",
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    }),
  ],
  [
    "endpointslices",
    importedSlice("testns", "svc1", "svc1-1", [{ ip: "172.0.0.1", hostname: "ep1a" }], {
      cluster: "cluster1",
      ports: [{ name: "http", port: 80 }],
    }),
  ],
  [
    "endpointslices",
    importedSlice(
      "testns",
      "hdls1",
      "hdls1-v4",
      [
        "172.0.0.2",
        "172.0.0.3",
        { ip: "172.0.0.4", hostname: "dup-name" },
        { ip: "172.0.0.5", hostname: "dup-name" },
      ],
      { cluster: "cluster1", ports: [{ name: "http", port: 80 }] },
    ),
  ],
  [
    "endpointslices",
    importedSlice("testns", "hdls1", "hdls1-v6", ["5678:abcd::1", "5678:abcd::2"], {
      cluster: "cluster1",
      ports: [{ name: "http", port: 80 }],
      addressType: "IPv6",
    }),
  ],
  [
    "endpointslices",
    importedSlice("testns", "hdlsprtls", "hdlsprtls-1", ["172.0.0.20"], { cluster: "cluster1" }),
  ],
];

// CoreDNS's expectedMultiClusterZone, in its order. Where it names a headless import's endpoints
// without their cluster (172-0-0-2.hdls1...: names its own answers do not have), these are the names
// the zone answers, with the cluster (2.4.1: 172-0-0-2.cluster1.hdls1...). Each record once.
const EXPECTED_MULTICLUSTER = `
clusterset.local. 5 IN NS ns.dns.clusterset.local.
ns.dns.clusterset.local. 5 IN A 10.0.0.10
hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.2
172-0-0-2.cluster1.hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.2
_http._tcp.hdls1.testns.svc.clusterset.local. 5 IN SRV 0 25 80 172-0-0-2.cluster1.hdls1.testns.svc.clusterset.local.
hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.3
172-0-0-3.cluster1.hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.3
_http._tcp.hdls1.testns.svc.clusterset.local. 5 IN SRV 0 25 80 172-0-0-3.cluster1.hdls1.testns.svc.clusterset.local.
hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.4
dup-name.cluster1.hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.4
_http._tcp.hdls1.testns.svc.clusterset.local. 5 IN SRV 0 25 80 dup-name.cluster1.hdls1.testns.svc.clusterset.local.
hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.5
dup-name.cluster1.hdls1.testns.svc.clusterset.local. 5 IN A 172.0.0.5
hdls1.testns.svc.clusterset.local. 5 IN AAAA 5678:abcd::1
5678-abcd--1.cluster1.hdls1.testns.svc.clusterset.local. 5 IN AAAA 5678:abcd::1
_http._tcp.hdls1.testns.svc.clusterset.local. 5 IN SRV 0 50 80 5678-abcd--1.cluster1.hdls1.testns.svc.clusterset.local.
hdls1.testns.svc.clusterset.local. 5 IN AAAA 5678:abcd::2
5678-abcd--2.cluster1.hdls1.testns.svc.clusterset.local. 5 IN AAAA 5678:abcd::2
_http._tcp.hdls1.testns.svc.clusterset.local. 5 IN SRV 0 50 80 5678-abcd--2.cluster1.hdls1.testns.svc.clusterset.local.
hdlsprtls.testns.svc.clusterset.local. 5 IN A 172.0.0.20
172-0-0-20.cluster1.hdlsprtls.testns.svc.clusterset.local. 5 IN A 172.0.0.20
kubedns.kube-system.svc.clusterset.local. 5 IN A 10.0.0.10
kubedns.kube-system.svc.clusterset.local. 5 IN SRV 0 100 53 kubedns.kube-system.svc.clusterset.local.
_dns._udp.kubedns.kube-system.svc.clusterset.local. 5 IN SRV 0 100 53 kubedns.kube-system.svc.clusterset.local.
svc-dual-stack.testns.svc.clusterset.local. 5 IN A 10.0.0.3
svc-dual-stack.testns.svc.clusterset.local. 5 IN AAAA 10::3
svc-dual-stack.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svc-dual-stack.testns.svc.clusterset.local.
_http._tcp.svc-dual-stack.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svc-dual-stack.testns.svc.clusterset.local.
svc1.testns.svc.clusterset.local. 5 IN A 10.0.0.1
svc1.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svc1.testns.svc.clusterset.local.
_http._tcp.svc1.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svc1.testns.svc.clusterset.local.
svc6.testns.svc.clusterset.local. 5 IN AAAA 1234:abcd::1
svc6.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svc6.testns.svc.clusterset.local.
_http._tcp.svc6.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svc6.testns.svc.clusterset.local.
svcempty.testns.svc.clusterset.local. 5 IN A 10.0.0.1
svcempty.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svcempty.testns.svc.clusterset.local.
_http._tcp.svcempty.testns.svc.clusterset.local. 5 IN SRV 0 100 80 svcempty.testns.svc.clusterset.local.
`;

describe("multicluster: zone transfers", () => {
  it("sends CoreDNS's multicluster zone, SOA to SOA, each record one the zone answers", () => {
    const mc = new Multicluster(["clusterset.local."]);
    const store = new Store({ zones: ZONES, waitFor: KINDS, multicluster: mc });
    for (const kind of KINDS) {
      store.listStart(kind);
      for (const [k, obj] of COREDNS_IMPORTS) if (k === kind) store.apply(kind, "ADDED", obj);
      store.listDone(kind);
    }
    const records = new Records(store, {
      zones: ZONES,
      ttl: 5,
      pods: "disabled",
      multicluster: mc,
      localIPs: ["10.0.0.10"],
    });
    const offer = kubernetesTransferer(store, records).transfer("clusterset.local.");
    assert.ok(offer !== undefined && !("unavailable" in offer), "clusterset.local. is offered");
    assert.match(
      rrToText(offer.soa),
      /^clusterset\.local\.\t5\tIN\tSOA\tns\.dns\.clusterset\.local\. hostmaster\.clusterset\.local\. /,
    );
    const sent = [...offer.records()].flat();
    const expected = EXPECTED_MULTICLUSTER.trim()
      .split("\n")
      .map((l) => rrToText(parseRRText(l)));
    assert.deepEqual(sent.map(rrToText), expected);
    // Each is answered (an SRV record up to its weight, which a transfer gives as CoreDNS's does).
    const unweighed = (rr: RR) => rrToText(rr).replace(/^(\S+\t\d+\tIN\tSRV\t\d+) \d+ /, "$1 - ");
    for (const rr of sent) {
      const a = records.answer("clusterset.local.", rr.name, rr.type);
      assert.ok(a.answer.map(unweighed).includes(unweighed(rr)), `${rrToText(rr)} is answered`);
    }
  });
});
