// Multi-Cluster Services (KEP-1645, sigs.k8s.io/mcs-api), for CoreDNS's `kubernetes { multicluster
// ZONES }`: the ServiceImports (multicluster.x-k8s.io/v1alpha1) and the EndpointSlices an MCS
// controller imports for them (labelled multicluster.kubernetes.io/service-name and .../source-cluster),
// cut down to what the multicluster zones answer (answers/multicluster-records.ts) and indexed by import.
//
// The store hands this index every ServiceImport and every EndpointSlice; it keeps the slices that
// carry the import label (a slice may also carry kubernetes.io/service-name, for a Service the MCS
// controller derived: the store then keeps it too). Each change returns the names, relative to the
// zone, whose answers it may have changed, for the answer cache.

import type { ClusterGroup, ServiceImport } from "../model/slim-types.ts";
import type { KEndpointSlice, KServiceImport } from "../model/source.ts";
import { MCS_SERVICE_NAME_LABEL, MCS_SOURCE_CLUSTER_LABEL, SERVICE_NAME_LABEL } from "../model/source.ts";
import { Slimmer, normalIP, slimPorts, type SlimOptions } from "./slim.ts";
import { SliceIndex } from "./slice-index.ts";
import { serviceKey } from "../model/object-key.ts";
import { importNames } from "../names/import-names.ts";
import { changedHoldings, type Holding } from "../names/name-tree.ts";

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export class Multicluster {
  /** The multicluster zones (canonical): answered from here instead of from Services. */
  readonly zones: readonly string[];
  readonly #slim: Slimmer;
  /** ServiceImports by "ns/name". */
  readonly #imports = new Map<string, ServiceImport>();
  /** Imported EndpointSlices by "ns/name", and by import. Plain Maps, unlike the store's tables
   * (./tables.ts): multi-cluster imports are rare, so this index stays on the heap of the thread that
   * watches them. */
  readonly #slices = new SliceIndex<ClusterGroup>(new Map(), new Map());
  /** Namespaces with imports, counted: such a namespace exists in the multicluster zones. */
  readonly #perNs = new Map<string, number>();

  constructor(zones: readonly string[], o: SlimOptions = {}) {
    this.zones = zones;
    this.#slim = new Slimmer(o);
  }

  serves(zone: string): boolean {
    return this.zones.includes(zone);
  }

  get size(): number {
    return this.#imports.size;
  }

  import(ns: string, name: string): ServiceImport | undefined {
    return this.#imports.get(serviceKey(ns, name));
  }

  /** Every import, in no particular order (a zone transfer sorts them). */
  imports(): IterableIterator<ServiceImport> {
    return this.#imports.values();
  }

  hasNamespace(ns: string): boolean {
    return this.#perNs.has(ns);
  }

  /** The ready endpoints of an import, in every cluster; groups left without one are dropped. */
  endpoints(imp: ServiceImport): ClusterGroup[] {
    const out: ClusterGroup[] = [];
    for (const g of this.#slices.of(serviceKey(imp.ns, imp.name))) {
      const endpoints = g.endpoints.filter((e) => e.ready);
      if (endpoints.length > 0) out.push(endpoints.length === g.endpoints.length ? g : { ...g, endpoints });
    }
    return out;
  }

  /** A ServiceImport added or changed (`obj`), or deleted (undefined). Returns the changed names. */
  applyImport(key: string, obj: KServiceImport | undefined): string[] {
    const next = obj && slimImport(obj);
    const prev = this.#imports.get(key);
    if (prev === undefined && next === undefined) return [];
    const [ns, name] = splitService(key);
    return this.#change(ns, name, () => {
      if (next) this.#imports.set(key, next);
      else this.#imports.delete(key);
      const delta = (next ? 1 : 0) - (prev ? 1 : 0);
      const n = (this.#perNs.get(ns) ?? 0) + delta;
      if (n > 0) this.#perNs.set(ns, n);
      else this.#perNs.delete(ns);
    });
  }

  /** An EndpointSlice added or changed (`obj`), or deleted (undefined): kept when it is labelled for an
   * import. Returns the changed names. */
  applySlice(key: string, obj: KEndpointSlice | undefined): string[] {
    const next = obj && this.#slimSlice(obj);
    const prev = this.#slices.get(key);
    if (prev === undefined && next === undefined) return [];
    const update = () => this.#slices.set(key, next);
    const change = (svc: string, inner: () => void) => this.#change(...splitService(svc), inner);
    // A slice relabelled to another import changes both: the update runs inside both changes, so
    // each looks at its import before and after it.
    if (prev && next && prev.service !== next.service) {
      let inner: string[] = [];
      const outer = change(prev.service, () => (inner = change(next.service, update)));
      return [...outer, ...inner];
    }
    return change((prev ?? next)!.service, update);
  }

  /** The end of a LIST of `kind`: drops what it did not deliver (`seen`: the keys it did). */
  sweep(kind: "serviceimports" | "endpointslices", seen: ReadonlySet<string>): string[] {
    const changed: string[] = [];
    const keys = [...(kind === "serviceimports" ? this.#imports : this.#slices).keys()];
    for (const key of keys) {
      if (seen.has(key)) continue;
      changed.push(
        ...(kind === "serviceimports" ? this.applyImport(key, undefined) : this.applySlice(key, undefined)),
      );
    }
    return changed;
  }

  /** Runs `update` and returns the names, relative to the zone, whose answers it changed: those the
   * import `ns/name` lists (../names/import-names.ts) with another holding before than after, and its
   * namespace when that comes or goes with its imports. */
  #change(ns: string, name: string, update: () => void): string[] {
    const had = this.#perNs.has(ns);
    const before = this.#names(ns, name);
    update();
    const after = this.#names(ns, name);
    const changed = changedHoldings(before, after);
    if (this.#perNs.has(ns) !== had) changed.push(`${ns}.svc`);
    return changed;
  }

  /** The names the import lists, relative to the zone, with what each holds. */
  #names(ns: string, name: string): Map<string, Holding> {
    const imp = this.import(ns, name);
    if (imp === undefined) return new Map();
    return importNames.list({ imp, groups: this.endpoints(imp), withSrv: true }, `${name}.${ns}.svc`);
  }

  #slimSlice(o: KEndpointSlice): ClusterGroup | undefined {
    const labels = o.metadata.labels;
    const service = labels?.[MCS_SERVICE_NAME_LABEL];
    if (!service) return undefined;
    // The slim form the store makes of a Service's slice, for the import the label names.
    const g = this.#slim.slice({
      ...o,
      metadata: { ...o.metadata, labels: { [SERVICE_NAME_LABEL]: service } },
    });
    if (g === undefined) return undefined;
    const cluster = (labels[MCS_SOURCE_CLUSTER_LABEL] ?? "").toLowerCase();
    return { ...g, cluster: LABEL.test(cluster) ? cluster : "" };
  }
}

/** "ns/name" -> [ns, name]. */
function splitService(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/** Undefined for an import DNS cannot publish: no namespace, or a type other than the API's two. */
export function slimImport(o: KServiceImport): ServiceImport | undefined {
  const { name, namespace: ns } = o.metadata;
  const type = o.spec?.type;
  if (!ns || (type !== "ClusterSetIP" && type !== "Headless")) return undefined;
  const raw = Array.isArray(o.spec?.ips) ? o.spec.ips : [];
  const ips = [...new Set(raw.map(normalIP).filter((ip) => ip !== undefined))];
  return {
    name,
    ns,
    headless: type === "Headless",
    ips: type === "Headless" ? [] : ips,
    ports: slimPorts(o.spec?.ports),
  };
}
