// The store's slim state as a snapshot holds it (snapshot.ts), and the relay hands it to workers.

import type { EndpointGroup, Service, SlimPod } from "../model/slim-types.ts";

/** The store's slim state by kind, as [key, value] pairs sorted by key. */
export interface StoreDump {
  services: [string, Service][];
  endpointslices: [string, EndpointGroup][];
  endpoints: [string, readonly EndpointGroup[]][];
  /** Namespace name -> whether its labels match namespace_labels. */
  namespaces: [string, boolean][];
  pods: [string, SlimPod][];
}

/** A table's entries sorted by key: a dump does not depend on the order a table iterates in. */
export function byKey<V>(entries: Iterable<[string, V]>): [string, V][] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
