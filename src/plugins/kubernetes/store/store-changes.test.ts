// The store's change reports against the answers themselves: random EndpointSlice changes (slices
// added, changed and deleted; addresses and hostnames shared between slices; readiness, zones and
// ports flipping) on a headless and a cluster IP service. After each one every answer that differs
// from before must be among the names the store reported (a missed name is a cached answer that stays
// stale; an extra one only costs a cache miss), and every answer must equal that of a store that
// took the same slices in one list (the indexes were kept in step). Run over Maps and over tables that
// copy every value through its codec (copyingTables), and over a shared index's.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kind } from "../model/source.ts";
import { Store } from "./store.ts";
import { Records } from "../answers/records.ts";
import { Type } from "../../../dns/constants.ts";
import { reverseName } from "../../../dns/name.ts";
import { rrToText } from "../../../dns/text.ts";
import { endpointSlice, namespace, service } from "../../../../test/k8s/objects.ts";
import { rng } from "../../../../test/helpers/rng.ts";
import { copyingTables } from "../../../offheap/copying-tables.ts";
import { heapTables, type Tables } from "../../../offheap/table.ts";
import { SharedIndex } from "../../../offheap/shared-index.ts";

const ZONES = ["cluster.local.", "in-addr.arpa."];
const KINDS: Kind[] = ["services", "endpointslices", "namespaces"];
const IPS = Array.from({ length: 12 }, (_, i) => `10.244.1.${i + 1}`);
const HOSTS = ["a", "b", "c", "d"];
const ZONE_NAMES = ["z1", "z2"];
const PORTS = [
  { name: "http", port: 80 },
  { name: "dns", port: 53, protocol: "UDP" as const },
];
const SERVICES = [
  service("default", "hl", { headless: true, ports: PORTS }),
  service("default", "web", { clusterIP: "10.96.0.20", ports: PORTS }),
];

/** Every name whose answer a slice change could alter, with the types to ask. */
function candidates(): [string, number][] {
  const out: [string, number][] = [];
  for (const svc of SERVICES) {
    const base = `${svc.metadata.name}.default.svc.cluster.local.`;
    const names = [base, `_tcp.${base}`, `_udp.${base}`, `_http._tcp.${base}`, `_dns._udp.${base}`];
    names.push(`pin._zone.${base}`, `_zone.${base}`, ...ZONE_NAMES.map((z) => `${z}.pin._zone.${base}`));
    names.push(...HOSTS.map((h) => `${h}.${base}`), ...IPS.map((ip) => `${ip.replaceAll(".", "-")}.${base}`));
    for (const n of names) out.push([n, Type.A], [n, Type.SRV]);
  }
  for (const ip of IPS) out.push([reverseName(ip)!, Type.PTR]);
  out.push(["1.244.10.in-addr.arpa.", Type.PTR], ["244.10.in-addr.arpa.", Type.PTR]);
  return out;
}

function randomSlice(random: () => number, svc: string, name: string) {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const n = Math.floor(random() * 4);
  const endpoints = Array.from({ length: n }, () => ({
    ip: pick(IPS),
    hostname: random() < 0.5 ? pick(HOSTS) : undefined,
    ready: random() < 0.75,
    zone: random() < 0.3 ? pick(ZONE_NAMES) : undefined,
  }));
  const ports = PORTS.filter(() => random() < 0.7);
  return endpointSlice("default", svc, name, endpoints, { ports });
}

describe("store: reported changes cover every changed answer", () => {
  const variants: [boolean, string, () => Tables][] = [
    [false, "Maps", () => heapTables],
    [true, "Maps", () => heapTables],
    [false, "copying tables", copyingTables],
    [false, "a shared index", () => new SharedIndex({ initial: 64 << 10 })],
  ];
  for (const [ignoreEmptyService, over, make] of variants) {
    it(`over 400 random slice changes (ignore empty_service ${ignoreEmptyService}, over ${over})`, () => {
      const random = rng(ignoreEmptyService ? 18 : 81);
      const reported: { names: readonly string[] | "all" } = { names: [] };
      /** A store that took the namespace, the services and these slices in one list each. */
      const listed = (
        slices: ReturnType<typeof endpointSlice>[],
        onChange?: (n: readonly string[] | "all") => void,
      ) => {
        const tables = make();
        const store = new Store({
          zones: ZONES,
          waitFor: KINDS,
          onChange,
          names: { ignoreEmptyService },
          tables,
        });
        for (const kind of KINDS) store.listStart(kind);
        store.apply("namespaces", "ADDED", namespace("default"));
        for (const s of SERVICES) store.apply("services", "ADDED", s);
        for (const s of slices) store.apply("endpointslices", "ADDED", s);
        for (const kind of KINDS) store.listDone(kind);
        return {
          store,
          records: new Records(store, { zones: ZONES, ttl: 5, pods: "disabled" }),
        };
      };
      const { store, records } = listed([], (n) => (reported.names = n));
      const names = candidates();
      const answers = (records: Records) =>
        names.map(([name, type]) => {
          const zone = records.zoneOf(name)!;
          const a = records.answer(zone, name, type);
          // The authority section is the SOA, whose serial moves with every change.
          return JSON.stringify([a.rcode, ...[...a.answer, ...a.additional].map(rrToText).sort()]);
        });
      const live = new Map<string, ReturnType<typeof endpointSlice>>();
      let before = answers(records);
      for (let step = 0; step < 400; step++) {
        const svc = SERVICES[Math.floor(random() * SERVICES.length)].metadata.name;
        const key = `${svc}-${Math.floor(random() * 4)}`;
        reported.names = [];
        if (live.has(key) && random() < 0.25) {
          store.apply("endpointslices", "DELETED", live.get(key)!);
          live.delete(key);
        } else {
          const slice = randomSlice(random, svc, key);
          store.apply("endpointslices", live.has(key) ? "MODIFIED" : "ADDED", slice);
          live.set(key, slice);
        }
        const after = answers(records);
        const got = reported.names as readonly string[] | "all";
        const missed = names.filter(([n], i) => after[i] !== before[i] && got !== "all" && !got.includes(n));
        assert.deepEqual(
          missed.map(([n, t]) => `${n} ${t}`),
          [],
          `step ${step}: answers changed but were not reported`,
        );
        const fresh = answers(listed([...live.values()]).records);
        const wrong = names.filter((_, i) => after[i] !== fresh[i]).map(([n, t]) => `${n} ${t}`);
        assert.deepEqual(wrong, [], `step ${step}: answers differ from a store listed afresh`);
        before = after;
      }
    });
  }
});
