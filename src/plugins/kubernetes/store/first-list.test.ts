// The first list skips the address index until the sync and builds it then, in one pass (store.ts
// #beforeSync, #openSynced). Two stores of the same random cluster, one filled by that first list and
// one by watch events after an empty sync (the per-change path), must then agree on every address
// answer: PTR targets, external addresses, partial reverse names, the count; and again after the same
// deletions, which the first store's counts must carry.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kind, KObject } from "../model/source.ts";
import type { Tables } from "../../../offheap/table.ts";
import { Store } from "./store.ts";
import { SharedIndex } from "../../../offheap/shared-index.ts";
import { ALL, ZONES } from "../../../../test/k8s/store-fixtures.ts";
import { endpointSlice, namespace, service } from "../../../../test/k8s/objects.ts";
import { rng } from "../../../../test/helpers/rng.ts";

/** A small cluster where addresses are shared between services, slices, hostnames and external IPs. */
function cluster(seed: number): [Kind, KObject][] {
  const r = rng(seed);
  const pick = (n: number) => Math.floor(r() * n);
  const ip = () => `10.${pick(3)}.${pick(4)}.${1 + pick(6)}`;
  const out: [Kind, KObject][] = [
    ["namespaces", namespace("a")],
    ["namespaces", namespace("b")],
  ];
  for (let i = 0; i < 30; i++) {
    const ns = pick(2) ? "a" : "b";
    const name = `s${i}`;
    const kind = pick(4);
    if (kind === 0)
      out.push(["services", service(ns, name, { headless: true, ports: [{ name: "p", port: 80 }] })]);
    else if (kind === 1) out.push(["services", service(ns, name, { externalName: "x.example." })]);
    else out.push(["services", service(ns, name, { clusterIP: ip(), externalIPs: pick(2) ? [ip()] : [] })]);
    for (let s = 0; s < pick(3); s++) {
      const eps = Array.from({ length: 1 + pick(4) }, (_, e) => ({
        ip: ip(),
        ready: pick(5) > 0,
        ...(pick(2) ? { hostname: `h${e}` } : {}),
      }));
      out.push(["endpointslices", endpointSlice(ns, name, `${name}-${s}`, eps)]);
    }
  }
  return out;
}

/** Every address and partial reverse name the cluster could touch. */
function everyAddress(): { ips: string[]; parents: string[] } {
  const ips: string[] = [];
  const parents = new Set<string>(["10.in-addr.arpa."]);
  for (let a = 0; a < 3; a++)
    for (let b = 0; b < 4; b++) {
      parents.add(`${a}.10.in-addr.arpa.`).add(`${b}.${a}.10.in-addr.arpa.`);
      for (let c = 1; c <= 6; c++) ips.push(`10.${a}.${b}.${c}`);
    }
  return { ips, parents: [...parents] };
}

function answers(store: Store) {
  const { ips, parents } = everyAddress();
  return {
    ptr: ips.map((ip) => [ip, store.ptr(ip)]),
    external: ips.map((ip) => [ip, store.externalServices(ip).map((s) => `${s.ns}/${s.name}`)]),
    parents: parents.filter((p) => store.reverseParentExists(p)),
    addresses: store.stats().addresses,
  };
}

function firstList(objects: [Kind, KObject][], tables: Tables | undefined): Store {
  const store = new Store({ zones: ZONES, waitFor: ALL, tables });
  for (const kind of ALL) {
    store.listStart(kind);
    for (const [k, o] of objects) if (k === kind) store.apply(kind, "ADDED", o);
    store.listDone(kind);
  }
  return store;
}

function watched(objects: [Kind, KObject][], tables: Tables | undefined): Store {
  const store = new Store({ zones: ZONES, waitFor: ALL, tables });
  for (const kind of ALL) {
    store.listStart(kind);
    store.listDone(kind);
  }
  for (const [k, o] of objects) store.apply(k, "ADDED", o);
  return store;
}

const TABLES: [string, () => Tables | undefined][] = [
  ["Maps", () => undefined],
  ["a shared index", () => new SharedIndex({ initial: 64 << 10 })],
];

for (const [over, tables] of TABLES) {
  describe(`store over ${over}: the first list's address index`, () => {
    it("answers every address as a store filled by watch events does, before and after deletions", () => {
      for (let seed = 1; seed <= 40; seed++) {
        const objects = cluster(seed);
        const a = firstList(objects, tables());
        const b = watched(objects, tables());
        assert.ok(answers(a).addresses > 0, `seed ${seed}: the cluster publishes addresses`);
        assert.deepEqual(answers(a), answers(b), `seed ${seed}: after the first list`);
        const r = rng(seed * 7919);
        for (const [k, o] of objects) {
          if (k === "namespaces" || r() < 0.5) continue;
          a.apply(k, "DELETED", o);
          b.apply(k, "DELETED", o);
        }
        assert.deepEqual(answers(a), answers(b), `seed ${seed}: after deletions`);
      }
    });
  });
}
