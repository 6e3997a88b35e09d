// What one service publishes, from its slim record and its published endpoints: the owner names with
// a signature of their answers (from ../names/service-names.ts, which answers/records.ts answers from
// too), and the addresses with their PTR targets. The store takes it before and after each change; the
// names whose signature differs are the answers the change altered.

import type { EndpointGroup, Service } from "../model/slim-types.ts";
import type { ServiceNames } from "../names/service-names.ts";

export interface Footprint {
  /** Relative owner name -> a signature of its answers. */
  names: Map<string, string>;
  /** Published address -> its PTR targets, as labels below the service's name ("" for its own). */
  ips: Map<string, readonly string[]>;
  /** The external addresses k8s_external publishes (and answers PTR for). */
  external: readonly string[];
}

/** The owner names a service publishes (../names/service-names.ts; none without `names`), each with a
 * signature of what it holds, and its addresses. k8s_external publishes the same names under its zones (SERVICE.NS for
 * SERVICE.NS.svc) from the service's external addresses and ports too: they count in the signatures,
 * and its SRV names are listed, so a change to them drops its names as well. */
export function footprint(
  names: ServiceNames | undefined,
  svc: Service,
  groups: readonly EndpointGroup[],
): Footprint {
  const signatures = new Map<string, string>();
  const external = svc.external?.filter((a) => !a.endsWith(".")) ?? [];
  if (names === undefined) return { names: signatures, ips: ptrLabels(svc, groups), external };
  const view = svc.external === undefined ? "" : JSON.stringify([svc.external, svc.ports]);
  for (const [name, h] of names.list(svc, groups)) signatures.set(name, JSON.stringify(h) + view);
  if (svc.external !== undefined) {
    const base = `${svc.name}.${svc.ns}.svc`;
    const named = svc.ports.filter((p) => p.name !== "");
    const viewNames = [
      base,
      ...named.flatMap((p) => [`_${p.proto}.${base}`, `_${p.name}._${p.proto}.${base}`]),
    ];
    for (const n of viewNames) if (!signatures.has(n)) signatures.set(n, view);
  }
  return { names: signatures, ips: ptrLabels(svc, groups), external };
}

/** Every address a service publishes, with its PTR targets relative to the zone: the service's
 * name for a cluster IP, `endpoint.service.ns.svc` for an endpoint. */
export function ptrTargets(svc: Service, groups: readonly EndpointGroup[]): Map<string, string[]> {
  const base = `${svc.name}.${svc.ns}.svc`;
  const targets = new Map<string, string[]>();
  for (const [ip, labels] of ptrLabels(svc, groups))
    targets.set(
      ip,
      labels.map((l) => (l === "" ? base : `${l}.${base}`)),
    );
  return targets;
}

/** What ptrTargets says, with the targets as labels below the service's name ("" for the service's
 * own): what a footprint keeps, since both of its sides are of one service. A watch event took
 * footprints of a whole slice twice, and writing out every endpoint's owner name was the most it
 * allocated. */
function ptrLabels(svc: Service, groups: readonly EndpointGroup[]): Map<string, string[]> {
  const labels = new Map<string, string[]>();
  for (const ip of svc.clusterIPs) labels.set(ip, [""]);
  for (const g of groups) {
    for (const e of g.endpoints) {
      const t = labels.get(e.ip);
      if (t === undefined) labels.set(e.ip, [e.name]);
      else if (!t.includes(e.name)) t.push(e.name);
    }
  }
  return labels;
}

/** What a group publishes for `svc`: its ready endpoints (all with publishNotReadyAddresses), as a
 * group of its own; nothing when none is left. */
export function published(svc: Service, g: EndpointGroup | undefined): EndpointGroup[] {
  if (g === undefined) return [];
  const endpoints = svc.publishNotReadyAddresses ? g.endpoints : g.endpoints.filter((e) => e.ready);
  if (endpoints.length === 0) return [];
  return [endpoints === g.endpoints ? g : { ...g, endpoints }];
}
