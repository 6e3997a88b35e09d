// What a kubernetes store is made with (./store.ts's Store): its zones, what it waits for, what it
// indexes, and whom it tells of a change.

import type { Kind } from "../model/source.ts";
import type { LabelSelector } from "../model/label-selector.ts";
import type { NameOptions } from "../names/service-names.ts";
import type { Multicluster } from "./multicluster.ts";
import type { Tables } from "../../../offheap/table.ts";
import type { ServiceKind } from "./programming-latency.ts";

export interface StoreOptions {
  /** The stanza's zones (canonical); forward zones turn relative names into owner names. */
  zones: readonly string[];
  /** Kinds whose first list must be done before the store counts as synced. `endpointslices` and
   * `endpoints` stand in for each other (the API source falls back to Endpoints on old clusters). */
  waitFor: readonly Kind[];
  /** endpoint_pod_names: name endpoints without a hostname after their pod. */
  endpointPodNames?: boolean;
  /** Index pods by IP (`pods verified`). */
  keepPods?: boolean;
  /** namespace_labels: only namespaces whose labels match are exposed. */
  namespaceSelector?: LabelSelector;
  /** Called with the owner names whose answers changed, or "all"; `at` is Date.now() of the change. */
  onChange?: (names: readonly string[] | "all", at: number) => void;
  /** Past this many names in one change, ask for a full invalidation instead. */
  maxNames?: number;
  /** This server's own addresses (its pod's): the services whose endpoints include one are the name
   * server's (`ns.dns.<zone>`), as in CoreDNS. */
  localIPs?: readonly string[];
  /** Called once a watched change of a service's endpoints is answered, with the service's kind and the
   * seconds since the change that triggered it (the Kubernetes DNS programming latency SLI; see
   * programming-latency.ts). */
  onProgrammed?: (serviceKind: ServiceKind, seconds: number) => void;
  /** `multicluster`: the index that takes the ServiceImports and the imported EndpointSlices. */
  multicluster?: Multicluster;
  /** Which names a service has (../names/service-names.ts); the answers read them from the store's
   * `names`. */
  names?: NameOptions;
  /** Where the store keeps its indexes (./tables.ts): Maps by default (heapTables), or a shared
   * index's tables that reader stores in other threads read (Store.reader). */
  tables?: Tables;
}
