import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../../../offheap/bytes.ts";
import type { Codec } from "../../../offheap/table.ts";
import { IndexReader, SharedIndex } from "../../../offheap/shared-index.ts";
import { sameJSON } from "../model/object-key.ts";
import type { Endpoint, EndpointGroup, PodRef, Service, SlimPod, SvcPort } from "../model/slim-types.ts";
import {
  countCodec,
  flagCodec,
  groupCodec,
  groupsCodec,
  keysCodec,
  podCodec,
  podRefsCodec,
  serviceCodec,
} from "./codecs.ts";
import { dashed } from "./packed.ts";
import { Slimmer, slimPod } from "./slim.ts";
import { endpointSlice, endpoints, pod, service } from "../../../../test/k8s/objects.ts";
import {
  randomGroup,
  randomPod,
  randomPodRefs,
  randomService,
  randomText,
} from "../../../../test/k8s/random-slim.ts";
import { rng } from "../../../../test/helpers/rng.ts";

/** `v` written between two other values, and read back: the codec must read exactly what it wrote. */
function roundTrip<V>(codec: Codec<V>, v: V): V {
  const w = new ByteWriter();
  w.u8(0xa5);
  codec.write(w, v);
  w.u8(0x5a);
  const r = new ByteReader(Buffer.from(w.bytes));
  assert.equal(r.u8(), 0xa5);
  const back = codec.read(r);
  assert.equal(r.u8(), 0x5a, "read stopped where write did");
  return back;
}

/** Equal field by field (optional fields absent, not undefined), and in JSON, keys in the same order. */
function assertRoundTrips<V>(codec: Codec<V>, v: V): V {
  const back = roundTrip(codec, v);
  assert.deepEqual(back, v);
  assert.ok(sameJSON(back, v), `${JSON.stringify(back)} !== ${JSON.stringify(v)}`);
  return back;
}

const WEB: SvcPort[] = [
  { name: "http", proto: "tcp", port: 80 },
  { name: "dns", proto: "udp", port: 53 },
];

function svc(o: Partial<Service>): Service {
  const base = { name: "web", ns: "default", type: "ClusterIP", ports: WEB, publishNotReadyAddresses: false };
  return { ...base, clusterIPs: ["10.96.0.10"], headless: false, ...o };
}

describe("store codecs: services", () => {
  it("round-trips every type and optional field, keys in slim.ts's order", () => {
    for (const s of [
      svc({}),
      svc({ clusterIPs: ["10.96.0.10", "fd00:10:96::a"] }),
      svc({ clusterIPs: ["fd00:10:96::a", "10.96.0.10"] }),
      svc({ clusterIPs: ["0.0.0.0", "255.255.255.255", "127.0.0.1"] }),
      svc({ clusterIPs: [], headless: true, publishNotReadyAddresses: true }),
      svc({ ports: [] }),
      svc({ ports: [{ name: "", proto: "tcp", port: 8080 }] }),
      svc({ type: "NodePort", ports: [{ name: "sctp", proto: "sctp", port: 2 ** 31 }] }),
      svc({ ports: [{ name: "x", proto: "dccp", port: 0 }] }),
      svc({ type: "SomethingNew" }),
      svc({ type: "ExternalName", clusterIPs: [], ports: [], externalName: "db.example.com." }),
      svc({ type: "LoadBalancer", external: ["192.0.2.1", "fd00::1", "lb-1.example.net."] }),
      { ...svc({}), externalName: "both.example.", external: ["192.0.2.7"] },
      svc({ name: "wéb-日本", ns: "ns-\u{1F600}" }),
    ]) {
      assertRoundTrips(serviceCodec, s);
    }
  });

  it("keeps text that only looks like an IPv4 address as text, so it reads back as it was", () => {
    const s = svc({
      clusterIPs: [
        "010.1.2.3",
        "1.2.3",
        "1.2.3.4.5",
        "256.1.1.1",
        "1..2.3",
        "1.2.3.",
        ".1.2.3",
        "1.2.3.4 ",
        "::ffff:1.2.3.4",
      ],
    });
    assertRoundTrips(serviceCodec, s);
  });

  it("refuses a port number it cannot hold, with a RangeError", () => {
    for (const port of [-1, 1.5, 2 ** 50]) {
      assert.throws(
        () => roundTrip(serviceCodec, svc({ ports: [{ name: "", proto: "tcp", port }] })),
        RangeError,
      );
    }
  });

  it("takes 33 bytes for a ClusterIP service with one address and two ports (its JSON text: 216)", () => {
    const w = new ByteWriter();
    serviceCodec.write(w, svc({}));
    assert.equal(w.length, 1 + 4 + 8 + (1 + (1 + 4 + 2) + (1 + 3 + 2)) + (1 + 1 + 4));
  });
});

const ep = (ip: string, o: Partial<Endpoint> = {}): Endpoint => ({ ip, name: dashed(ip), ready: true, ...o });

describe("store codecs: endpoint groups", () => {
  it("round-trips addresses of both families, labels, readiness and every topology", () => {
    const g: EndpointGroup = {
      service: "default/web",
      ports: WEB,
      endpoints: [
        ep("10.244.1.1"),
        ep("10.244.1.2", { ready: false }),
        ep("10.244.1.3", { name: "web-0" }),
        ep("10.244.1.4", { name: "10-244-1-4" }),
        ep("fd00:10:244::1"),
        ep("fd00:10:244::2", { name: "web-ipv6" }),
        ep("10.244.1.5", { zone: "europe-west1-b" }),
        ep("10.244.1.6", { zone: "europe-west1-b", forZones: ["europe-west1-b", "europe-west1-c"] }),
        ep("10.244.1.7", { forZones: ["europe-west1-c"] }),
        ep("10.244.1.8", { zone: "europe-west1-b" }),
        ep("10.244.1.9", { zone: "corp.example.com", forZones: [] }),
        ep("10.244.1.10", { name: "nämé" }),
      ],
    };
    const back = assertRoundTrips(groupCodec, g);
    assert.equal(back.endpoints[9].zone, back.endpoints[6].zone);
  });

  it("round-trips a group without ports or endpoints, and lists of groups", () => {
    const empty: EndpointGroup = { service: "default/none", ports: [], endpoints: [] };
    assertRoundTrips(groupCodec, empty);
    assertRoundTrips(groupsCodec, []);
    assertRoundTrips(groupsCodec, [empty, { ...empty, endpoints: [ep("10.0.0.1")] }, empty]);
  });

  it("writes the zone once per group, not once per endpoint", () => {
    const zoned = (n: number): EndpointGroup => ({
      service: "default/web",
      ports: [],
      endpoints: Array.from({ length: n }, (_, i) => ep(`10.0.0.${i}`, { zone: "europe-west1-b" })),
    });
    const size = (g: EndpointGroup) => {
      const w = new ByteWriter();
      groupCodec.write(w, g);
      return w.length;
    };
    // Each endpoint: a flag byte, 4 address bytes, its topology's place.
    assert.equal(size(zoned(11)) - size(zoned(1)), 10 * 6);
  });
});

describe("store codecs: pods, pod references, keys, counts and flags", () => {
  it("round-trips them", () => {
    const pods: SlimPod[] = [
      { ns: "default", name: "web-0", ips: ["10.244.1.1"] },
      { ns: "default", name: "web-1", ips: ["10.244.1.2", "fd00:10:244::2"] },
      { ns: "kube-system", name: "node-agent", ips: ["172.18.0.2"], hostNetwork: true },
      { ns: "default", name: "custom-dns", ips: ["10.244.1.3"], ownSearch: true },
      { ns: "kube-system", name: "both", ips: ["172.18.0.2"], hostNetwork: true, ownSearch: true },
      { ns: "default", name: "none", ips: [] },
    ];
    for (const p of pods) assertRoundTrips(podCodec, p);
    const refs: PodRef[] = [
      { ns: "a", name: "b" },
      { ns: "c", name: "d", hostNetwork: true },
      { ns: "e", name: "f", ownSearch: true },
      { ns: "ü", name: "" },
    ];
    assertRoundTrips(podRefsCodec, refs);
    assertRoundTrips(podRefsCodec, []);
    assertRoundTrips(keysCodec, ["default/web", "ns/ünïcode-日本", ""]);
    assertRoundTrips(keysCodec, []);
    for (const n of [0, 1, 127, 128, 2 ** 31, 2 ** 32, 2 ** 53 - 1]) assertRoundTrips(countCodec, n);
    assertRoundTrips(flagCodec, true);
    assertRoundTrips(flagCodec, false);
  });
});

describe("store codecs: random values from a seeded generator", () => {
  it("round-trip one by one, and back to back in one buffer", () => {
    const next = rng(34);
    const codecs = [
      [serviceCodec, randomService],
      [groupCodec, randomGroup],
      [groupsCodec, (n: () => number) => Array.from({ length: Math.floor(n() * 3) }, () => randomGroup(n))],
      [podCodec, randomPod],
      [podRefsCodec, randomPodRefs],
      [keysCodec, (n: () => number) => Array.from({ length: Math.floor(n() * 4) }, () => randomText(n))],
      [countCodec, (n: () => number) => Math.floor(n() ** 4 * 2 ** 53)],
      [flagCodec, (n: () => number) => n() < 0.5],
    ] as [Codec<unknown>, (n: () => number) => unknown][];
    const w = new ByteWriter();
    const written: [Codec<unknown>, unknown][] = [];
    for (let i = 0; i < 4000; i++) {
      const [codec, make] = codecs[i % codecs.length];
      const v = make(next);
      assertRoundTrips(codec, v);
      codec.write(w, v);
      written.push([codec, v]);
    }
    const r = new ByteReader(Buffer.from(w.bytes));
    for (const [codec, v] of written) assert.ok(sameJSON(codec.read(r), v));
    assert.equal(r.pos, w.length);
  });
});

describe("store codecs: in shared memory, and bytes that are not a value", () => {
  const all: [Codec<unknown>, (n: () => number) => unknown][] = [
    [serviceCodec, randomService],
    [groupCodec, randomGroup],
    [groupsCodec, (n) => [randomGroup(n), randomGroup(n)]],
    [podCodec, randomPod],
    [podRefsCodec, randomPodRefs],
    [keysCodec, (n) => [randomText(n), randomText(n)]],
  ];

  it("reads values from a Buffer over a SharedArrayBuffer, as worker threads will", () => {
    const next = rng(7);
    const w = new ByteWriter();
    const values = all.map(([codec, make]) => {
      const v = make(next);
      codec.write(w, v);
      return v;
    });
    const shared = Buffer.from(new SharedArrayBuffer(w.length + 16), 16);
    shared.set(w.bytes);
    const r = new ByteReader().at(shared, 0);
    all.forEach(([codec], i) => assert.ok(sameJSON(codec.read(r), values[i])));
  });

  it("round-trips through the shared index's tables, read by a reader of its own", () => {
    const index = new SharedIndex({ initial: 4096 });
    const next = rng(21);
    all.forEach(([codec, make], i) => {
      const table = index.table(`t${i}`, codec);
      const view = new IndexReader(index.handle, 0).table(`t${i}`, codec);
      const model = new Map<string, unknown>();
      for (let step = 0; step < 300; step++) {
        const key = `k${Math.floor(next() * 50)}`;
        const v = make(next);
        index.write(() => table.set(key, v));
        model.set(key, v);
      }
      for (const [key, v] of model) {
        assert.ok(sameJSON(view.get(key), v));
        assert.ok(sameJSON(table.get(key), v));
      }
    });
  });

  it("ends a read of a value cut short, or of random bytes, with a value or a RangeError", () => {
    // A reader of a table a writer is changing may see either: it must come back to check.
    const next = rng(11);
    const w = new ByteWriter();
    for (let i = 0; i < 3000; i++) {
      const [codec, make] = all[i % all.length];
      w.reset();
      codec.write(w, make(next));
      const whole = Buffer.from(w.bytes);
      const bytes =
        i % 2 === 0
          ? whole.subarray(0, Math.floor(next() * whole.length))
          : Buffer.from(whole.map((b) => (next() < 0.2 ? Math.floor(next() * 256) : b)));
      try {
        codec.read(new ByteReader(bytes));
      } catch (e) {
        assert.ok(e instanceof RangeError, `${String(e)}`);
      }
    }
  });
});

describe("store codecs: what the Slimmer makes of API objects", () => {
  const slim = new Slimmer();

  it("round-trips its services", () => {
    for (const o of [
      service("default", "web", {
        clusterIP: "10.96.0.7",
        ports: [80, { name: "DNS", port: 53, protocol: "UDP" }],
      }),
      service("default", "dual", {
        clusterIPs: ["10.96.0.8", "FD00:10:96::8"],
        ports: [{ port: 9, protocol: "SCTP" }],
      }),
      service("default", "headless", { headless: true, publishNotReadyAddresses: true }),
      service("default", "ext", { externalName: "DB.Example.COM" }),
      service("default", "lb", {
        type: "LoadBalancer",
        clusterIP: "10.96.0.9",
        ports: [443],
        externalIPs: ["192.0.2.1"],
        ingress: [{ ip: "203.0.113.9" }, { hostname: "LB-1.Example.NET" }],
      }),
    ]) {
      assertRoundTrips(serviceCodec, slim.service(o)!);
    }
  });

  it("round-trips its packed endpoints to plain ones that serialise alike", () => {
    const slice = slim.slice(
      endpointSlice(
        "default",
        "web",
        "web-1",
        [
          { ip: "10.244.1.1", zone: "Europe-West1-B", hints: ["europe-west1-b", "europe-west1-c"] },
          { ip: "10.244.1.2", zone: "europe-west1-c", hostname: "web-2" },
          { ip: "10.244.1.3", ready: false, pod: "web-3" },
          { ip: "10.244.1.4", terminating: true, zone: "europe-west1-c" },
        ],
        { ports: [{ name: "http", port: 80 }, { port: 81 }] },
      ),
    )!;
    const back = roundTrip(groupCodec, slice);
    assert.ok(sameJSON(back, slice), `${JSON.stringify(back)} !== ${JSON.stringify(slice)}`);
    assert.deepEqual(back, JSON.parse(JSON.stringify(slice)));
    const v6 = slim.slice(
      endpointSlice(
        "default",
        "web6",
        "web6-1",
        [{ ip: "FD00:10:244:0:0:0:0:1" }, { ip: "fd00::2", hostname: "b" }],
        {
          addressType: "IPv6",
        },
      ),
    )!;
    assert.ok(sameJSON(roundTrip(groupCodec, v6), v6));
    const legacy = slim.endpoints(
      endpoints("default", "old", [
        {
          addresses: ["10.244.2.1", { ip: "10.244.2.2", hostname: "old-2" }],
          notReadyAddresses: ["10.244.2.3"],
        },
        { addresses: ["fd00::3"], ports: [{ name: "dns", port: 53, protocol: "UDP" }] },
      ]),
    )!;
    assert.ok(sameJSON(roundTrip(groupsCodec, legacy), legacy));
    // What a store restores from the plain form packs back to the same thing.
    assert.ok(sameJSON(new Slimmer().pack(back), slice));
  });

  it("round-trips its pods", () => {
    for (const o of [
      pod("default", "web-0", "10.244.1.1"),
      pod("default", "dual", "10.244.1.2", { ips: ["10.244.1.2", "FD00::2"] }),
      pod("kube-system", "agent", "", { hostNetwork: true }),
    ]) {
      assertRoundTrips(podCodec, slimPod(o)!);
    }
  });
});
