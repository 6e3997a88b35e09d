// What one service publishes, from its slim record and its published endpoints: the owner names with
// a signature of their answers, and the addresses with their PTR targets. The store takes it before
// and after each change; the names whose signature differs are the answers the change altered.

import type { EndpointGroup, Service } from "./slim-types.ts";

export interface Footprint {
  /** Relative owner name -> a signature of its answers. */
  names: Map<string, string>;
  /** Published address -> its PTR targets. */
  ips: Map<string, readonly string[]>;
  /** The external addresses k8s_external publishes (and answers PTR for). */
  external: readonly string[];
}

/** The labels of zonal names: ZONE.pin._zone.SERVICE.NS.svc (CoreDNS PR 8388). */
export const ZONAL = "pin._zone";

/** The owner names a service publishes, each with a signature of its answers, and its addresses. */
export function footprint(svc: Service, groups: readonly EndpointGroup[]): Footprint {
  const names = new Map<string, string>();
  const base = `${svc.name}.${svc.ns}.svc`;
  // A cluster IP's answers depend on its endpoints only through "has any" (ignore empty_service).
  const whole = JSON.stringify([svc, svc.headless ? groups : groups.length > 0]);
  names.set(base, whole);
  const ports = svc.headless ? groups.flatMap((g) => g.ports) : svc.externalName ? [] : svc.ports;
  for (const p of ports) {
    if (!p.name) continue;
    // Whether `_proto` exists follows the service's too (ignore empty_service, a headless service's
    // endpoints), not only its ports.
    names.set(`_${p.proto}.${base}`, whole);
    names.set(`_${p.name}._${p.proto}.${base}`, whole);
  }
  const byName = new Map<string, string[]>();
  const add = (owner: string, ip: string) => {
    const list = byName.get(owner);
    if (list === undefined) byName.set(owner, [ip]);
    else list.push(ip);
  };
  for (const g of groups) {
    for (const e of g.endpoints) {
      add(`${e.name}.${base}`, e.ip);
      if (e.zone !== undefined) add(`${e.zone}.${ZONAL}.${base}`, e.ip);
    }
  }
  for (const [owner, list] of byName) names.set(owner, list.sort().join());
  if (groups.some((g) => g.endpoints.some((e) => e.zone !== undefined))) {
    names.set(`${ZONAL}.${base}`, "");
    names.set(`_zone.${base}`, "");
  }
  const external = svc.external?.filter((a) => !a.endsWith(".")) ?? [];
  return { names, ips: ptrTargets(svc, groups), external };
}

/** Every address a service publishes, with its PTR targets relative to the zone: the service's
 * name for a cluster IP, `endpoint.service.ns.svc` for an endpoint. */
export function ptrTargets(svc: Service, groups: readonly EndpointGroup[]): Map<string, string[]> {
  const base = `${svc.name}.${svc.ns}.svc`;
  const targets = new Map<string, string[]>();
  for (const ip of svc.clusterIPs) targets.set(ip, [base]);
  for (const g of groups) {
    for (const e of g.endpoints) {
      const owner = `${e.name}.${base}`;
      const t = targets.get(e.ip);
      if (t === undefined) targets.set(e.ip, [owner]);
      else if (!t.includes(owner)) t.push(owner);
    }
  }
  return targets;
}

/** What a group publishes for `svc`: its ready endpoints (all with publishNotReadyAddresses), as a
 * group of its own; nothing when none is left. */
export function published(svc: Service, g: EndpointGroup | undefined): EndpointGroup[] {
  if (g === undefined) return [];
  const endpoints = svc.publishNotReadyAddresses ? g.endpoints : g.endpoints.filter((e) => e.ready);
  if (endpoints.length === 0) return [];
  return [endpoints === g.endpoints ? g : { ...g, endpoints }];
}
