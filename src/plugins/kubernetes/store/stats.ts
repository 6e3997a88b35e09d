// What a store reports of itself (Store.stats): its objects by kind and a rough estimate of the heap
// its slim records would take as JS objects (Unbound's get_mem, in spirit).

import type { Kind } from "../model/source.ts";
import type { EndpointGroup, Service } from "../model/slim-types.ts";

export interface StoreStats {
  objects: Record<Kind, number>;
  /** Published addresses in the reverse index. */
  addresses: number;
  /** A rough estimate of the heap the slim records take. */
  bytes: number;
  synced: boolean;
  /** Date.now() of the last change that altered an answer. */
  modified: number;
}

export function serviceBytes(services: Iterable<Service>): number {
  let bytes = 0;
  for (const s of services) {
    bytes += 120 + s.name.length + s.ns.length + s.type.length + (s.externalName?.length ?? 0);
    for (const ip of s.clusterIPs) bytes += 24 + ip.length;
    if (s.external) for (const a of s.external) bytes += 40 + a.length;
    bytes += s.ports.length * 56;
  }
  return bytes;
}

export function groupBytes(groups: Iterable<EndpointGroup>): number {
  let bytes = 0;
  for (const g of groups) bytes += 64 + g.ports.length * 56 + g.endpoints.length * 56;
  return bytes;
}

/** The estimate of a store on the heap: its services, its endpoint groups (EndpointSlices, and the
 * subsets of Endpoints objects), and the indexes, which know their own. */
export function heapBytes(
  services: { values(): Iterable<Service> },
  groups: [{ values(): Iterable<EndpointGroup> }, { values(): Iterable<readonly EndpointGroup[]> }],
  ...indexes: { bytes(): number }[]
): number {
  let bytes = serviceBytes(services.values()) + groupBytes(groups[0].values());
  for (const subsets of groups[1].values()) bytes += groupBytes(subsets);
  for (const x of indexes) bytes += x.bytes();
  return bytes;
}
