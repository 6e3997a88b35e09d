// What the answers read of the store, and all they may: answers/ sees the store only through this
// view, whether the store is the main thread's (the writer) or a worker's reader of it.

import type { EndpointGroup, PodRef, Service } from "../model/slim-types.ts";
import type { ServiceNames } from "../names/service-names.ts";

/** The name server's name, relative to the zone. */
export const NS_NAME = "ns.dns";

export interface StoreView {
  /** The names below services, which answers/records.ts answers and footprints list. */
  readonly names: ServiceNames;
  /** True once the first list of every kind waited for is done. */
  readonly synced: boolean;
  /** Date.now() of the last change that altered an answer (the SOA serial). */
  readonly modified: number;
  /** Runs `fn`, which reads the store more than once, on one consistent view of it (Store.read). */
  readonly read: (<T>(fn: () => T) => T) | undefined;
  service(ns: string, name: string): Service | undefined;
  /** Every service, in no particular order (a zone transfer sorts them). */
  services(): IterableIterator<Service>;
  namespaceExposed(ns: string): boolean;
  /** The endpoints a service publishes (Store.endpoints). */
  endpoints(svc: Service): EndpointGroup[];
  /** Where a service's endpoints come from, for `explain`. */
  endpointSources(svc: Service): { object: string; group: EndpointGroup }[];
  /** PTR targets of an address, relative to the zone, in exposed namespaces. */
  ptr(ip: string): string[];
  /** True when a published address lies below this partial reverse name. */
  reverseParentExists(name: string): boolean;
  podsByIP(ip: string): readonly PodRef[];
  /** The namespace of the pod that owns `ip`, when that is certain. */
  clientNamespace(ip: string): string | undefined;
  /** The services publishing this external address, in exposed namespaces. */
  externalServices(ip: string): Service[];
  /** The services that select this server's own pod. */
  localServices(): Service[];
}
