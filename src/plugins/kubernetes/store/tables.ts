// The store's tables (../../../offheap/table.ts), one place: each index's name and the codec of its
// values. The store asks its Tables for each by name; a shared index creates them from this list.

import { heapTables, type Codec, type Table, type Tables } from "../../../offheap/table.ts";
import { LoneStringTable } from "./one-or-many.ts";
import type { EndpointGroup, PodRef, Service, SlimPod } from "../model/slim-types.ts";
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

/** What each table holds. */
interface StoreTableValues {
  /** Services by "ns/name". */
  services: Service;
  /** EndpointSlices by "ns/name". */
  slices: EndpointGroup;
  /** A service's key -> the keys of its EndpointSlices. */
  "slices.byService": readonly string[];
  /** Legacy Endpoints by "ns/name": one group per subset. */
  legacy: readonly EndpointGroup[];
  /** Namespace name -> whether its labels match namespace_labels. */
  namespaces: boolean;
  /** Namespace name -> 1 while it has services (the writer counts them: ./counted-keys.ts). */
  servicesPerNs: number;
  /** Published address (canonical text) -> the keys of the services publishing it. */
  "addresses.byIP": readonly string[];
  /** External address -> the keys of the services publishing it. */
  "addresses.byExternal": readonly string[];
  /** Partial reverse name above published addresses -> 1 while any lies below it (counted-keys.ts). */
  "addresses.reverseParents": number;
  /** Pods by "ns/name". */
  pods: SlimPod;
  /** Pod address -> the pods that have it. */
  "pods.byIP": readonly PodRef[];
}

export type StoreTableName = keyof StoreTableValues;

/** Every table of the store with its codec. */
export const STORE_TABLES: { readonly [N in StoreTableName]: Codec<StoreTableValues[N]> } = {
  services: serviceCodec,
  slices: groupCodec,
  "slices.byService": keysCodec,
  legacy: groupsCodec,
  namespaces: flagCodec,
  servicesPerNs: countCodec,
  "addresses.byIP": keysCodec,
  "addresses.byExternal": keysCodec,
  "addresses.reverseParents": countCodec,
  pods: podCodec,
  "pods.byIP": podRefsCodec,
};

/** The store's table `name` from `tables`. On the heap, key lists keep a lone key without an array. */
export function storeTable<N extends StoreTableName>(tables: Tables, name: N): Table<StoreTableValues[N]> {
  if (tables === heapTables && STORE_TABLES[name] === keysCodec) {
    return new LoneStringTable() as Table<readonly string[]> as Table<StoreTableValues[N]>;
  }
  return tables.table(name, STORE_TABLES[name]);
}
