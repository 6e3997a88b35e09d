// The kubernetes store's unit tests' vocabulary: a store synced from a list of objects that records
// what it reports as changed, and the `web` service and slice most scenarios start from. Shared by
// store.test.ts (over Maps) and store-by-value.test.ts (over tables that copy every value).

import assert from "node:assert/strict";
import type { Kind, KObject } from "../../src/plugins/kubernetes/model/source.ts";
import type { StoreOptions } from "../../src/plugins/kubernetes/store/store-options.ts";
import { Store } from "../../src/plugins/kubernetes/store/store.ts";
import { endpointSlice, service } from "./objects.ts";

export const ZONES = ["cluster.local.", "in-addr.arpa.", "ip6.arpa."];
export const ALL: Kind[] = ["services", "endpointslices", "namespaces", "pods"];

export interface Recorded {
  store: Store;
  changes: (readonly string[] | "all")[];
  /** What the store was made with (without onChange): a reader store of the same tables takes it. */
  options: StoreOptions;
}

/** A store with every kind listed once (from `objects`), recording what it reports as changed. */
export function synced(objects: [Kind, KObject][] = [], o: Partial<StoreOptions> = {}): Recorded {
  const changes: (readonly string[] | "all")[] = [];
  const options = { zones: ZONES, waitFor: ALL, ...o };
  const store = new Store({ ...options, onChange: (n) => void changes.push(n) });
  for (const kind of ALL) {
    store.listStart(kind);
    for (const [k, obj] of objects) if (k === kind) store.apply(kind, "ADDED", obj);
    store.listDone(kind);
  }
  changes.length = 0;
  return { store, changes, options };
}

/** A reported change's names, sorted; fails on "all" or nothing. */
export function names(c: readonly string[] | "all" | undefined): string[] {
  assert.ok(Array.isArray(c), `a list of names, not ${String(c)}`);
  return [...c].sort();
}

export const web = (ip = "10.96.0.20") =>
  service("default", "web", { clusterIP: ip, ports: [{ name: "http", port: 80 }, { port: 8080 }] });
export const webSlice = (...eps: Parameters<typeof endpointSlice>[3]) =>
  endpointSlice("default", "web", "web-abcde", eps, { ports: [{ name: "http", port: 8080 }] });
