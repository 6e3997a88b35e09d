// The name tree written once (service-names.ts), checked on generated clusters: services with cluster
// IPs (dual-stack too), headless ones with StatefulSet hostnames, ExternalNames, named and unnamed
// ports, endpoints in zones, and multi-cluster imports with their clusters' slices.
//  1. What the store lists for a service (the footprint the answer cache is invalidated by) is what
//     the answers hold: every listed name answers what the list says, and every other name below the
//     service answers nothing, or is marked not to be cached.
//  2. After every random change (a Service, an EndpointSlice, a ServiceImport, an imported slice or a
//     Namespace added, changed or deleted), every name whose answer differs from before is among the
//     names the store reported, unless its answer before was not to be cached. A missed name is an
//     answer the cache keeps serving stale; an extra one only costs a miss.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Type } from "../../../dns/constants.ts";
import { join, reverseName } from "../../../dns/name.ts";
import { rrToText } from "../../../dns/text.ts";
import type { Kind, KObject } from "../model/source.ts";
import { Store } from "../store/store.ts";
import { Records } from "../answers/records.ts";
import { Multicluster } from "../store/multicluster.ts";
import type { NameOptions } from "./service-names.ts";
import {
  endpointSlice,
  importedSlice,
  namespace,
  service,
  serviceImport,
  type SliceEndpointSpec,
  type SlicePortSpec,
} from "../../../../test/k8s/objects.ts";
import { rng } from "../../../../test/helpers/rng.ts";

const ZONE = "cluster.local.";
const CLUSTERSET = "clusterset.local.";
const ZONES = [ZONE, CLUSTERSET, "in-addr.arpa.", "ip6.arpa."];
const KINDS: Kind[] = ["services", "endpointslices", "namespaces", "serviceimports"];

// The vocabulary generated clusters are made of; the candidate names are made of it too, plus a
// label of each kind that no object uses.
const NAMESPACES = ["default", "web"];
const SERVICES = ["a", "b", "c", "d"];
const V4 = ["10.244.0.1", "10.244.0.2", "10.244.0.3", "10.244.0.4", "10.244.0.5"];
const V6 = ["fd00::1", "fd00::2", "fd00::3"];
const CLUSTER_IPS = ["10.96.0.1", "10.96.0.2", "fd00:96::1", "fd00:96::2"];
const IMPORT_IPS = ["10.42.0.1", "fd00:42::1"];
const HOSTS = ["h0", "h1"];
const ZONE_LABELS = ["z1", "z2"];
const CLUSTERS = ["c1", "c2"];
const PORTS: SlicePortSpec[] = [
  { name: "http", port: 80 },
  { name: "dns", port: 53, protocol: "UDP" },
  { name: "", port: 8080 },
  { name: "http", port: 81 },
];
const dash = (ip: string) => ip.replaceAll(/[.:]/g, "-");

/** Every name a generated cluster could answer, and some it never does. */
function candidates(): string[] {
  const names = [ZONE, CLUSTERSET, join("svc", ZONE), join("svc", CLUSTERSET), join("ns.dns", ZONE)];
  const endpointLabels = [...HOSTS, ...V4.map(dash), ...V6.map(dash), "nobody"];
  for (const zone of [ZONE, CLUSTERSET]) {
    for (const ns of [...NAMESPACES, "nons"]) {
      names.push(join(`${ns}.svc`, zone));
      for (const svc of [...SERVICES, "nosvc"]) {
        const base = join(`${svc}.${ns}.svc`, zone);
        const below = ["", "_tcp", "_udp", "_sctp", "_http._tcp", "_dns._udp", "_dns._tcp", "_x._tcp"];
        below.push(...endpointLabels);
        if (zone === ZONE) {
          const zones = [...ZONE_LABELS, "z9", "z1.z2"];
          below.push("_zone", "pin._zone", "prefer._zone", "x._zone");
          below.push(...zones.flatMap((z) => [`${z}.pin._zone`, `${z}.prefer._zone`]));
        } else {
          for (const c of [...CLUSTERS, "c9"]) below.push(c, ...endpointLabels.map((l) => `${l}.${c}`));
        }
        for (const b of below) names.push(b === "" ? base : `${b}.${base}`);
      }
    }
  }
  for (const ip of [...V4, ...V6, ...CLUSTER_IPS]) names.push(reverseName(ip)!);
  names.push("0.244.10.in-addr.arpa.", "96.10.in-addr.arpa.", "10.in-addr.arpa.");
  return names;
}

/** A random cluster's objects, changed one at a time. */
class World {
  readonly objects = new Map<string, [Kind, KObject]>();
  readonly #random: () => number;

  constructor(random: () => number) {
    this.#random = random;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.#random() * xs.length)];
  }

  chance(p: number): boolean {
    return this.#random() < p;
  }

  some<T>(xs: readonly T[], p = 0.5): T[] {
    return xs.filter(() => this.chance(p));
  }

  /** One random object: [kind, the key it replaces or deletes, the object]. */
  object(): [Kind, string, KObject] {
    const ns = this.pick(NAMESPACES);
    const name = this.pick(SERVICES);
    const r = this.#random();
    if (r < 0.05) return ["namespaces", `ns/${ns}`, namespace(ns)];
    if (r < 0.3) return ["services", `svc/${ns}/${name}`, this.#service(ns, name)];
    // Slices are named apart from their service, so a change may relabel one to another service.
    if (r < 0.7) {
      const slice = `slice-${this.pick(["0", "1", "2", "3", "4"])}`;
      return ["endpointslices", `slice/${ns}/${slice}`, this.#slice(ns, name, slice)];
    }
    if (r < 0.82) return ["serviceimports", `import/${ns}/${name}`, this.#import(ns, name)];
    const slice = `imported-${this.pick(["0", "1", "2"])}`;
    return ["endpointslices", `slice/${ns}/${slice}`, this.#importedSlice(ns, name, slice)];
  }

  #ports(): SlicePortSpec[] {
    return this.some(PORTS);
  }

  #service(ns: string, name: string): KObject {
    const ports = this.#ports().map((p) => ({ ...p, name: p.name === "" ? undefined : p.name }));
    const r = this.#random();
    if (r < 0.1)
      return service(ns, name, { externalName: this.pick(["x.example.com", "a.default.svc.cluster.local"]) });
    const publishNotReadyAddresses = this.chance(0.2);
    if (r < 0.45) return service(ns, name, { headless: true, ports, publishNotReadyAddresses });
    const v4 = this.pick(CLUSTER_IPS.slice(0, 2));
    const clusterIPs = this.chance(0.3) ? [v4, this.pick(CLUSTER_IPS.slice(2))] : [v4];
    return service(ns, name, { clusterIPs, ports, publishNotReadyAddresses });
  }

  #endpoints(ips: readonly string[]): SliceEndpointSpec[] {
    return this.some(ips, 0.4).map((ip) => ({
      ip,
      hostname: this.chance(0.4) ? this.pick(HOSTS) : undefined,
      ready: this.chance(0.8),
      zone: this.chance(0.5) ? this.pick(ZONE_LABELS) : undefined,
    }));
  }

  #slice(ns: string, svc: string, name: string): KObject {
    const v6 = this.chance(0.3);
    return endpointSlice(ns, svc, name, this.#endpoints(v6 ? V6 : V4), {
      ports: this.#ports(),
      addressType: v6 ? "IPv6" : "IPv4",
    });
  }

  #import(ns: string, name: string): KObject {
    const ports = this.#ports().map((p) => ({ ...p, name: p.name === "" ? undefined : p.name }));
    if (this.chance(0.5)) return serviceImport(ns, name, { type: "Headless", ports });
    return serviceImport(ns, name, { ips: this.some(IMPORT_IPS), ports });
  }

  #importedSlice(ns: string, svc: string, name: string): KObject {
    const v6 = this.chance(0.3);
    const endpoints = this.#endpoints(v6 ? V6 : V4);
    return importedSlice(ns, svc, name, endpoints, {
      cluster: this.pick(CLUSTERS),
      ports: this.#ports(),
      addressType: v6 ? "IPv6" : "IPv4",
    });
  }
}

function storeOf(names: NameOptions, onChange?: (n: readonly string[] | "all") => void) {
  const multicluster = new Multicluster([CLUSTERSET]);
  const store = new Store({ zones: ZONES, waitFor: KINDS, multicluster, onChange, names });
  const records = new Records(store, { zones: ZONES, ttl: 5, pods: "disabled", multicluster });
  return { store, records };
}

/** What every candidate answers (to ANY: the records of every type, with the additional section),
 * and whether that answer may be cached. */
function answers(records: Records, names: readonly string[]): { text: string; cacheable: boolean }[] {
  return names.map((name) => {
    const a = records.answer(records.zoneOf(name)!, name, Type.ANY);
    // The authority section is the SOA, whose serial moves with every change.
    const text = JSON.stringify([a.rcode, ...[...a.answer, ...a.additional].map(rrToText).sort()]);
    return { text, cacheable: !a.uncacheable };
  });
}

const OPTIONS: NameOptions[] = [{}, { zonal: true }, { ignoreEmptyService: true, zonal: true }];

describe("service names: what the store lists is what the answers hold", () => {
  for (const [i, names] of OPTIONS.entries()) {
    it(`over 60 generated clusters (${JSON.stringify(names)})`, () => {
      const world = new World(rng(27 + i));
      for (let run = 0; run < 60; run++) {
        const { store, records } = storeOf(names);
        for (const kind of KINDS) store.listStart(kind);
        for (let n = 0; n < 30; n++) {
          const [kind, , obj] = world.object();
          store.apply(kind, "ADDED", obj);
        }
        for (const kind of KINDS) store.listDone(kind);
        const all = candidates();
        for (const svc of store.services()) {
          if (!store.namespaceExposed(svc.ns)) continue;
          const groups = store.endpoints(svc);
          const listed = store.names.list(svc, groups);
          const base = `${svc.name}.${svc.ns}.svc`;
          for (const name of all) {
            const abs = name.endsWith(`.${base}.${ZONE}`) || name === `${base}.${ZONE}`;
            if (!abs) continue;
            const rel = name.slice(0, -ZONE.length - 1);
            const below = rel === base ? [] : rel.slice(0, -base.length - 1).split(".");
            const held = store.names.holding(svc, groups, below, true);
            const inList = listed.get(rel);
            if (inList !== undefined) {
              assert.deepEqual(held, inList, `run ${run}: ${name} answers what the list says`);
            } else {
              assert.ok(held === undefined || held.unlisted, `run ${run}: ${name} exists but is not listed`);
            }
            const a = records.answer(ZONE, name, Type.ANY);
            assert.equal(
              a.rcode === 0 && inList === undefined && !a.uncacheable,
              false,
              `run ${run}: ${name}`,
            );
          }
        }
      }
    });
  }
});

describe("service names: a change reports every name whose answer it changed", () => {
  for (const [i, names] of OPTIONS.entries()) {
    it(`over 600 random changes (${JSON.stringify(names)})`, () => {
      const world = new World(rng(270 + i));
      const reported = { names: new Set<string>(), all: false };
      const { store, records } = storeOf(names, (n) => {
        if (n === "all") reported.all = true;
        else for (const name of n) reported.names.add(name);
      });
      for (const kind of KINDS) {
        store.listStart(kind);
        store.listDone(kind);
      }
      const names_ = candidates();
      let before = answers(records, names_);
      for (let step = 0; step < 600; step++) {
        reported.names.clear();
        reported.all = false;
        const [kind, key, obj] = world.object();
        const had = world.objects.has(key);
        if (had && world.chance(0.25)) {
          store.apply(kind, "DELETED", world.objects.get(key)![1]);
          world.objects.delete(key);
        } else {
          store.apply(kind, had ? "MODIFIED" : "ADDED", obj);
          world.objects.set(key, [kind, obj]);
        }
        const after = answers(records, names_);
        if (!reported.all) {
          const missed = names_.filter(
            (n, j) => after[j].text !== before[j].text && before[j].cacheable && !reported.names.has(n),
          );
          assert.deepEqual(
            missed,
            [],
            `step ${step} (${kind} ${key}): answers changed but were not reported`,
          );
        }
        before = after;
      }
    });
  }
});
