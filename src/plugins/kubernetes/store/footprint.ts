// What one service publishes, from its slim record and its published endpoints: the owner names with
// what each holds (from ../names/service-names.ts, which answers/records.ts answers from too), and the
// addresses with their PTR targets. The store takes it before and after each change; the names that
// hold other records after it (changedNames) are the answers the change altered. Compared as
// records, not as serialised signatures: serialising every name twice was a fifth of what a watch
// event allocated.

import type { EndpointGroup, Service } from "../model/slim-types.ts";
import type { ServiceNames } from "../names/service-names.ts";
import { changedHoldings, sameHolding, type Holding } from "../names/name-tree.ts";

export interface Footprint {
  /** Relative owner name -> what it holds (VIEW_ONLY: a name only k8s_external's view publishes). */
  names: Map<string, Holding>;
  /** k8s_external's view of the service (its external addresses and ports), which every name's
   * answer under its zones depends on: "" without one. */
  view: string;
  /** Published address -> its PTR targets, as labels below the service's name ("" for its own). */
  ips: Map<string, readonly string[]>;
  /** The external addresses k8s_external publishes (and answers PTR for). */
  external: readonly string[];
}

/** What a name k8s_external publishes and the service's own list does not holds. */
const VIEW_ONLY: Holding = {};

/** The owner names a service publishes (../names/service-names.ts; none without `names`), each with
 * what it holds, and its addresses. k8s_external publishes the same names under its zones
 * (SERVICE.NS for SERVICE.NS.svc) from the service's external addresses and ports too: they are the
 * footprint's view, and its SRV names are listed, so a change to them drops its names as well. */
export function footprint(
  names: ServiceNames | undefined,
  svc: Service,
  groups: readonly EndpointGroup[],
): Footprint {
  const external = svc.external?.filter((a) => !a.endsWith(".")) ?? [];
  const view = svc.external === undefined ? "" : JSON.stringify([svc.external, svc.ports]);
  if (names === undefined) return { names: new Map(), view, ips: ptrLabels(svc, groups), external };
  const listed = names.list(svc, groups);
  if (svc.external !== undefined) {
    const base = `${svc.name}.${svc.ns}.svc`;
    const named = svc.ports.filter((p) => p.name !== "");
    const viewNames = [
      base,
      ...named.flatMap((p) => [`_${p.proto}.${base}`, `_${p.name}._${p.proto}.${base}`]),
    ];
    for (const n of viewNames) if (!listed.has(n)) listed.set(n, VIEW_ONLY);
  }
  return { names: listed, view, ips: ptrLabels(svc, groups), external };
}

/** The names whose answers differ between two footprints of one service: what one holds and the
 * other does not, what holds other records, and every name when k8s_external's view changed. */
export function changedNames(before: Footprint, after: Footprint): string[] {
  return changedHoldings(before.names, after.names, before.view === after.view ? sameListing : () => false);
}

/** A view-only name equals only another (it is in no list: its answer is the view's alone). */
function sameListing(a: Holding, b: Holding): boolean {
  if (a === VIEW_ONLY || b === VIEW_ONLY) return a === b;
  return sameHolding(a, b);
}

/** `before` publishes an address that `after` no longer does. */
export function dropsAddress(before: Footprint, after: Footprint): boolean {
  for (const ip of before.ips.keys()) if (!after.ips.has(ip)) return true;
  return false;
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
