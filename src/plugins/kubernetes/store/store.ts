// The slim index of the cluster that the kubernetes plugin answers from. Objects arrive through the
// Sink contract (../model/source.ts) in API shape and are cut down at once to the few strings DNS
// needs; no raw object is kept. Indexes: services by "namespace/name", endpoint groups by service,
// published addresses by IP (for PTR, address-index.ts), pods by IP (pod-index.ts, only when `pods
// verified` asks for them).
//
// Every change computes the owner names whose answers it changed (before and after, by content) and
// hands them to `onChange`, so the answer cache drops exactly those; a namespace that appears or
// vanishes, or a change too large to list, asks for a full invalidation instead.

import type {
  EventType,
  Kind,
  KObject,
  KPod,
  KService,
  KEndpointSlice,
  KEndpoints,
} from "../model/source.ts";
import { programmingSeconds } from "./programming-latency.ts";
import type { KServiceImport } from "../model/source.ts";
import { objectKey, sameJSON, serviceKey } from "../model/object-key.ts";
import { sameGroup } from "../model/same-group.ts";
import { sliceDelta } from "./slice-delta.ts";
import type { StoreOptions } from "./store-options.ts";
import type { EndpointGroup, PodRef, Service, SlimPod } from "../model/slim-types.ts";
import { Slimmer, slimPod } from "./slim.ts";
import { PodIndex } from "./pod-index.ts";
import { Latch } from "../sync/latch.ts";
import { changedNames, dropsAddress, footprint, ptrTargets, published, type Footprint } from "./footprint.ts";
import { AddressIndex } from "./address-index.ts";
import { CountedKeys } from "./counted-keys.ts";
import { SliceIndex } from "./slice-index.ts";
import { ServiceNames } from "../names/service-names.ts";
import { PendingChanges, type NameView } from "./pending-changes.ts";
import { isReverseZone } from "../names/zones.ts";
import { heapTables, type Table, type Tables } from "../../../offheap/table.ts";
import { storeTable } from "./tables.ts";
import { heapBytes, type StoreStats } from "./stats.ts";
import { NS_NAME, type StoreView } from "./store-view.ts";
import { byKey, type StoreDump } from "./store-dump.ts";

export type { StoreStats } from "./stats.ts";
export type { StoreDump } from "./store-dump.ts";

const KUBE_DNS = serviceKey("kube-system", "kube-dns");
export { NS_NAME } from "./store-view.ts";
const DEFAULT_MAX_NAMES = 10_000;

export class Store implements StoreView {
  /** The names below services, which answers/records.ts answers and footprints list. */
  readonly names: ServiceNames;
  readonly #options: StoreOptions;
  readonly #slim: Slimmer;
  // The indexes, in tables (./tables.ts) that hold their values by value: a value read back is an
  // equal copy, so changes are found by comparing content, never identity.
  readonly #services: Table<Service>;
  /** EndpointSlices by "ns/name", and by service. */
  readonly #slices: SliceIndex<EndpointGroup>;
  /** Legacy Endpoints by "ns/name": one group per subset. */
  readonly #legacy: Table<readonly EndpointGroup[]>;
  /** Namespace objects: name -> labels match namespace_labels (true without it). */
  readonly #namespaces: Table<boolean>;
  /** Namespace -> how many services it has (readers ask only whether it has any). */
  readonly #servicesPerNs: CountedKeys;
  readonly #pods: PodIndex;
  readonly #addresses: AddressIndex;
  /** Set on a reader (Store.reader): the Sink refuses, the state comes from readerState. */
  readonly #reader: boolean;
  readonly #listing = new Map<Kind, Set<string>>();
  readonly #listed = new Set<Kind>();
  /** Kinds loaded from a snapshot and not listed from the API since. */
  readonly #restored = new Set<Kind>();
  readonly #pending: PendingChanges;
  /** Open once every kind waited for was listed, from the API or a snapshot. */
  readonly #synced = new Latch();
  /** Open once every kind waited for was listed from the API. */
  readonly #fromApi = new Latch();

  /** Runs `fn`, which reads the store more than once (one question's answer), on one consistent view
   * of it: a reader store's tables change under it (Tables.read). Undefined where they cannot. */
  readonly read: (<T>(fn: () => T) => T) | undefined;
  readonly #bytes: (() => number) | undefined;

  /** `mode` "reader": see Store.reader. */
  constructor(o: StoreOptions, mode: "writer" | "reader" = "writer") {
    this.#options = o;
    this.#reader = mode === "reader";
    const tables = o.tables ?? heapTables;
    this.read = tables.read?.bind(tables);
    this.#bytes = tables.bytes?.bind(tables);
    this.#services = storeTable(tables, "services");
    this.#slices = new SliceIndex(storeTable(tables, "slices"), storeTable(tables, "slices.byService"));
    this.#legacy = storeTable(tables, "legacy");
    this.#namespaces = storeTable(tables, "namespaces");
    this.#servicesPerNs = new CountedKeys(storeTable(tables, "servicesPerNs"));
    this.#pods = new PodIndex(tables);
    this.#addresses = new AddressIndex(tables);
    this.names = new ServiceNames(o.names);
    const forward = o.zones.filter((z) => !isReverseZone(z));
    const max = o.maxNames ?? DEFAULT_MAX_NAMES;
    this.#pending = new PendingChanges(o.zones, forward, max, () => this.#flush());
    this.#slim = new Slimmer(o);
    if (this.#reader) return;
    if (this.#computeSynced()) this.#synced.open();
    if (this.#computeSynced(false)) this.#fromApi.open();
  }

  /** A store that only reads its tables, which another store (the writer, in another thread) fills
   * through the same Tables: its Sink methods throw, and whether it is synced, where its answers come
   * from and when they last changed are what the writer tells it through readerState. */
  static reader(o: StoreOptions & { tables: Tables }): Store {
    return new Store(o, "reader");
  }

  /** On a reader, takes the writer's state (its synced, servingFrom === "api" and modified): `synced`
   * and `fromApi` open the latches (they never close again), `modified` is the SOA serial's time. */
  readerState(s: { synced: boolean; fromApi: boolean; modified: number }): void {
    if (!this.#reader) throw new Error("readerState is for a reader store (Store.reader)");
    this.#pending.clock.at = s.modified;
    if (s.synced || s.fromApi) this.#synced.open();
    if (s.fromApi) this.#fromApi.open();
  }

  // -------------------------------------------------------------------------------------------------
  // Sink

  listStart(kind: Kind): void {
    this.#writing();
    this.#listing.set(kind, new Set());
  }

  apply(kind: Kind, type: EventType, obj: KObject): void {
    this.#writing();
    const meta = obj?.metadata;
    if (!meta || typeof meta.name !== "string") return;
    const key = objectKey(kind, meta.name, meta.namespace);
    const seen = this.#listing.get(kind);
    if (type !== "DELETED") seen?.add(key);
    const batch = seen !== undefined;
    switch (kind) {
      case "services":
        this.#applyService(key, type === "DELETED" ? undefined : this.#slim.service(obj as KService));
        break;
      case "endpointslices":
        this.#applySlice(key, type === "DELETED" ? undefined : this.#slim.slice(obj as KEndpointSlice));
        this.#imported(
          this.#options.multicluster?.applySlice(
            key,
            type === "DELETED" ? undefined : (obj as KEndpointSlice),
          ),
        );
        break;
      case "serviceimports":
        this.#imported(
          this.#options.multicluster?.applyImport(
            key,
            type === "DELETED" ? undefined : (obj as KServiceImport),
          ),
        );
        break;
      case "endpoints":
        this.#applyLegacy(key, type === "DELETED" ? undefined : this.#slim.endpoints(obj as KEndpoints));
        break;
      case "namespaces":
        this.#applyNamespace(meta.name, type !== "DELETED", meta.labels);
        break;
      case "pods":
        if (this.#options.keepPods)
          this.#applyPod(key, type === "DELETED" ? undefined : slimPod(obj as KPod));
        break;
    }
    if (batch) return;
    this.#flush();
    if (kind === "endpointslices" || kind === "endpoints") this.#programmed(kind, type, obj);
  }

  listDone(kind: Kind): void {
    this.#writing();
    const seen = this.#listing.get(kind);
    if (!seen) return;
    for (const key of this.#keysOf(kind)) if (!seen.has(key)) this.#remove(kind, key);
    if (kind === "serviceimports" || kind === "endpointslices")
      this.#imported(this.#options.multicluster?.sweep(kind, seen));
    this.#listing.delete(kind);
    this.#listed.add(kind);
    this.#restored.delete(kind);
    // The API serves endpoints as one of the two kinds: once it listed one, a snapshot's copy of the
    // other is not coming back.
    const other =
      kind === "endpointslices" ? "endpoints" : kind === "endpoints" ? "endpointslices" : undefined;
    if (other !== undefined && this.#restored.delete(other))
      for (const key of this.#keysOf(other)) this.#remove(other, key);
    if (!this.#synced.isOpen && this.#computeSynced()) this.#openSynced();
    if (this.#computeSynced(false)) this.#fromApi.open();
    this.#flush();
  }

  // -------------------------------------------------------------------------------------------------
  // Reads, for answers/records.ts

  /** True once the first list of every kind waited for is done. */
  get synced(): boolean {
    return this.#synced.isOpen;
  }

  /** Where the answers come from: "api" once every kind waited for was listed from the API,
   * "snapshot" while some still come from a snapshot, "none" before either. */
  get servingFrom(): "api" | "snapshot" | "none" {
    if (this.#fromApi.isOpen) return "api";
    return this.#synced.isOpen ? "snapshot" : "none";
  }

  /** The slim state, for a snapshot file (snapshot.ts), each kind sorted by key (a table's order is
   * its own). */
  dump(): StoreDump {
    return {
      services: byKey(this.#services.entries()),
      endpointslices: byKey(this.#slices.entries()),
      endpoints: byKey(this.#legacy.entries()),
      namespaces: byKey(this.#namespaces.entries()),
      pods: byKey(this.#pods.entries()),
    };
  }

  /** Loads a snapshot's objects for every kind the API has not listed yet. Those kinds count as synced
   * until the API lists them: that list's listDone drops whatever the API no longer has. Returns the
   * kinds restored. */
  restore(d: StoreDump): Kind[] {
    this.#writing();
    const kinds: Kind[] = [];
    const fresh = (k: Kind) => !this.#listed.has(k) && !this.#restored.has(k);
    if (fresh("services")) for (const [k, v] of d.services) this.#applyService(k, v);
    if (fresh("endpointslices"))
      for (const [k, v] of d.endpointslices) this.#applySlice(k, this.#slim.pack(v));
    const pack = (g: EndpointGroup) => this.#slim.pack(g);
    if (fresh("endpoints")) for (const [k, v] of d.endpoints) this.#applyLegacy(k, v.map(pack));
    if (fresh("namespaces")) for (const [k, v] of d.namespaces) this.#namespaces.set(k, v);
    if (fresh("pods") && this.#options.keepPods) for (const [k, v] of d.pods) this.#applyPod(k, v);
    for (const k of ["services", "endpointslices", "endpoints", "namespaces", "pods"] as const) {
      if (fresh(k)) {
        this.#restored.add(k);
        kinds.push(k);
      }
    }
    this.#pending.all();
    if (!this.#synced.isOpen && this.#computeSynced()) this.#openSynced();
    this.#flush();
    return kinds;
  }

  /** Resolves once every kind waited for was listed from the API (not a snapshot). */
  whenApi(): Promise<void> {
    return this.#fromApi.wait();
  }

  whenSynced(): Promise<void> {
    return this.#synced.wait();
  }

  /** Date.now() of the last change that altered an answer (the SOA serial). */
  get modified(): number {
    return this.#pending.clock.at;
  }

  service(ns: string, name: string): Service | undefined {
    return this.#services.get(serviceKey(ns, name));
  }

  /** Every service, in no particular order (a zone transfer sorts them). */
  services(): IterableIterator<Service> {
    return this.#services.values();
  }

  /** A namespace is exposed when it exists (a Namespace object, or a service in it) and, with
   * namespace_labels, when its Namespace object's labels match. */
  namespaceExposed(ns: string): boolean {
    const matched = this.#namespaces.get(ns);
    if (this.#options.namespaceSelector) return matched === true;
    return matched !== undefined || this.#servicesPerNs.has(ns);
  }

  /** Where a service's endpoints come from, for `explain`: its EndpointSlices, else its Endpoints
   * object, each with all its endpoints (ready or not). */
  endpointSources(svc: Service): { object: string; group: EndpointGroup }[] {
    const key = serviceKey(svc.ns, svc.name);
    const sliceKeys = this.#slices.keysOf(key);
    if (sliceKeys.length > 0) {
      return sliceKeys.flatMap((k) => {
        const group = this.#slices.get(k);
        return group === undefined ? [] : [{ object: `EndpointSlice ${k}`, group }];
      });
    }
    // An Endpoints object is named after its service: its key is the service's.
    return (this.#legacy.get(key) ?? []).map((group) => ({ object: `Endpoints ${key}`, group }));
  }

  /** The endpoints a service publishes: ready ones (every one with publishNotReadyAddresses), from its
   * EndpointSlices, or from its Endpoints when it has no slice. Groups without an endpoint left are
   * dropped. */
  endpoints(svc: Service): EndpointGroup[] {
    if (svc.externalName !== undefined) return [];
    const key = serviceKey(svc.ns, svc.name);
    const slices = this.#slices.of(key);
    const groups = slices.length > 0 ? slices : (this.#legacy.get(key) ?? []);
    return groups.flatMap((g) => published(svc, g));
  }

  /** PTR targets of an address, relative to the zone ("nginx.default.svc"), in exposed namespaces. */
  ptr(ip: string): string[] {
    const services = this.#exposedServices(this.#addresses.services(ip));
    return [...new Set(services.flatMap((svc) => ptrTargets(svc, this.endpoints(svc)).get(ip) ?? []))];
  }

  /** The services publishing this external address, in exposed namespaces (k8s_external's PTR). */
  externalServices(ip: string): Service[] {
    return this.#exposedServices(this.#addresses.externalServices(ip));
  }

  /** The services that select this server's own pod: those whose published endpoints include one of
   * its addresses (StoreOptions.localIPs), in exposed namespaces. */
  localServices(): Service[] {
    return this.#exposedServices(
      (this.#options.localIPs ?? []).flatMap((ip) => this.#addresses.services(ip)),
    );
  }

  /** The services of `keys` that exist in exposed namespaces, each once (by key: a table's values are
   * copies), in key order: the same answer however the objects arrived (the first list builds the
   * address index in the table's order, a watch in the events'). */
  #exposedServices(keys: readonly string[]): Service[] {
    const out: Service[] = [];
    for (const key of [...new Set(keys)].sort()) {
      const svc = this.#services.get(key);
      if (svc && this.namespaceExposed(svc.ns)) out.push(svc);
    }
    return out;
  }

  /** Names the store's changes also touch under other zones (k8s_external's): see PendingChanges. */
  addView(view: NameView): void {
    this.#pending.addView(view);
  }

  /** True when a published address lies below this partial reverse name ("244.10.in-addr.arpa."). */
  reverseParentExists(name: string): boolean {
    return this.#addresses.reverseParentExists(name);
  }

  podsByIP(ip: string): readonly PodRef[] {
    return this.#pods.byIP(ip);
  }

  /** The namespace of the pod that owns `ip`, when that is certain (see PodIndex.clientNamespace). */
  clientNamespace(ip: string): string | undefined {
    return this.#pods.clientNamespace(ip);
  }

  stats(): StoreStats {
    // A shared index knows its bytes; estimating them would decode every record (at every scrape).
    const bytes =
      this.#bytes?.() ?? heapBytes(this.#services, [this.#slices, this.#legacy], this.#pods, this.#addresses);
    return {
      objects: {
        services: this.#services.size,
        endpointslices: this.#slices.size,
        endpoints: this.#legacy.size,
        namespaces: this.#namespaces.size,
        pods: this.#pods.size,
        serviceimports: this.#options.multicluster?.size ?? 0,
      },
      addresses: this.#addresses.size,
      bytes,
      synced: this.#synced.isOpen,
      modified: this.#pending.clock.at,
    };
  }

  // -------------------------------------------------------------------------------------------------
  // Changes

  /** The object `key` of `kind` is gone (a list did not have it). */
  #remove(kind: Kind, key: string): void {
    if (kind === "services") this.#applyService(key, undefined);
    else if (kind === "endpointslices") this.#applySlice(key, undefined);
    else if (kind === "endpoints") this.#applyLegacy(key, undefined);
    else if (kind === "namespaces") this.#applyNamespace(key, false, undefined);
    else if (kind === "pods") this.#applyPod(key, undefined);
  }

  #applyService(key: string, next: Service | undefined): void {
    const prev = this.#services.get(key);
    if (prev === next || (prev && next && sameJSON(prev, next))) return;
    const ns = prev?.ns ?? next!.ns;
    this.#change(key, [ns], () => {
      if (next) this.#services.set(key, next);
      else this.#services.delete(key);
      const delta = (next ? 1 : 0) - (prev ? 1 : 0);
      if (delta !== 0) this.#servicesPerNs.add(ns, delta);
    });
  }

  #applySlice(key: string, next: EndpointGroup | undefined): void {
    const prev = this.#slices.get(key);
    if (prev === next || (prev && next && sameGroup(prev, next))) return;
    const update = () => this.#slices.set(key, next);
    if (prev && next && prev.service !== next.service) {
      // A slice relabelled to another service: both services' answers change.
      this.#change(prev.service, [], () => this.#change(next.service, [], update));
    } else this.#changeSlice(key, (prev ?? next)!.service, prev, next, update);
  }

  /** One EndpointSlice of the service `svcKey` changed from `prev` to `next` (either may be absent):
   * compares what this slice publishes, not the whole service. Comparing the whole service made a
   * change cost the service's size: 21 ms for one endpoint of a service of 5,000 endpoints in 50
   * slices, and that service's first list one second (quadratic in its slices). The whole service is
   * compared when the slice is its first or its last, which switches it to or from its Endpoints
   * object. */
  #changeSlice(
    key: string,
    svcKey: string,
    prev: EndpointGroup | undefined,
    next: EndpointGroup | undefined,
    update: () => void,
  ): void {
    if (this.#beforeSync(update)) return;
    const svc = this.#services.get(svcKey);
    // Slices without a service, or of an ExternalName service, publish nothing.
    if (svc === undefined || svc.externalName !== undefined) return update();
    const count = this.#slices.keysOf(svcKey).length;
    if (count === 0 || count - (prev ? 1 : 0) + (next ? 1 : 0) === 0) {
      return this.#change(svcKey, [], update);
    }
    const [from, to] = sliceDelta(published(svc, prev), published(svc, next));
    // Both footprints read no table: taken before the change, outside the index's write section. So
    // are the other slices, which an address this slice no longer publishes may still be in (this
    // change leaves them as they are): a large service's slices decoded inside the section held
    // every reader up meanwhile.
    const before = footprint(this.#listedNames(), svc, from);
    const after = footprint(this.#listedNames(), svc, to);
    const others = dropsAddress(before, after)
      ? new Set(
          this.#slices
            .keysOf(svcKey)
            .filter((k) => k !== key)
            .flatMap((k) => published(svc, this.#slices.get(k)).flatMap((g) => g.endpoints.map((e) => e.ip))),
        )
      : undefined;
    update();
    this.#report(svcKey, before, after, (ip) => others?.has(ip) === true);
  }

  #applyLegacy(key: string, next: readonly EndpointGroup[] | undefined): void {
    const prev = this.#legacy.get(key);
    if (
      prev === next ||
      (prev && next && prev.length === next.length && prev.every((g, i) => sameGroup(g, next[i])))
    )
      return;
    // An Endpoints object is named after its service: its key is the service's.
    this.#change(key, [], () => {
      if (next) this.#legacy.set(key, next);
      else this.#legacy.delete(key);
    });
  }

  #applyNamespace(name: string, present: boolean, labels: Record<string, string> | undefined): void {
    const prev = this.#namespaces.get(name);
    const next = present ? (this.#options.namespaceSelector?.(labels) ?? true) : undefined;
    if (prev === next) return;
    const before = this.namespaceExposed(name);
    if (next === undefined) this.#namespaces.delete(name);
    else this.#namespaces.set(name, next);
    if (this.namespaceExposed(name) !== before) this.#changedAll();
  }

  #applyPod(key: string, next: SlimPod | undefined): void {
    this.#changed(this.#pods.apply(key, next), []);
  }

  /** Runs `update` between two footprints of the service `key` and records what differs. A namespace
   * in `namespaces` whose exposure flips asks for a full invalidation (ns.svc names, pod names). */
  #change(key: string, namespaces: readonly string[], update: () => void): void {
    if (this.#beforeSync(update)) return;
    const exposedBefore = namespaces.map((ns) => this.namespaceExposed(ns));
    const before = this.#footprint(key);
    update();
    const after = this.#footprint(key);
    if (namespaces.some((ns, i) => this.namespaceExposed(ns) !== exposedBefore[i])) this.#changedAll();
    this.#report(key, before, after);
  }

  /** Records what differs between two footprints of the service `key` (of all of it, or of one of its
   * slices, with `kept` as for AddressIndex.update) and keeps the address index in step. */
  #report(key: string, before: Footprint, after: Footprint, kept?: (ip: string) => boolean): void {
    const rel = changedNames(before, after);
    const abs: string[] = [];
    this.#addresses.update(key, before, after, abs, kept);
    // The name server's addresses: kube-dns's, or those of the services that select this server.
    const local = this.#options.localIPs ?? [];
    if (key === KUBE_DNS || local.some((ip) => before.ips.has(ip) || after.ips.has(ip))) rel.push(NS_NAME);
    // Before the sync the names are not listed; the change still moves the SOA serial.
    if (!this.#synced.isOpen) this.#pending.clock.stamp(false);
    this.#changed(rel, abs);
  }

  /** What the service `key` publishes now. */
  #footprint(key: string): Footprint {
    const svc = this.#services.get(key);
    if (svc === undefined) return { names: new Map(), view: "", ips: new Map(), external: [] };
    return footprint(this.#listedNames(), svc, this.endpoints(svc));
  }

  /** Before the first sync a change is only applied: nothing answers from the store yet, and the
   * sync drops every answer, so there is no footprint to compare and the address index is built once,
   * at the sync (#openSynced). Comparing footprints per object made the first list of 100k services
   * pay for every address twice over. True when `update` ran so. */
  #beforeSync(update: () => void): boolean {
    if (this.#synced.isOpen) return false;
    update();
    this.#pending.clock.stamp(false);
    return true;
  }

  /** The first sync: the address index of everything listed (changes until now skipped it), a full
   * invalidation, and the latch opened. */
  #openSynced(): void {
    for (const [key, svc] of this.#services.entries())
      this.#addresses.add(key, footprint(undefined, svc, this.endpoints(svc)));
    this.#pending.all();
    this.#synced.open();
  }

  /** The names footprints list: none before the sync, which reports no change (it drops every
   * answer), so the first list does not pay for them. */
  #listedNames(): ServiceNames | undefined {
    return this.#synced.isOpen ? this.names : undefined;
  }

  /** Records changed names: `relative` under every forward zone, `absolute` as they are. Before the
   * sync nothing is recorded: the sync itself asks for a full invalidation. */
  #changed(relative: readonly string[], absolute: readonly string[]): void {
    if (relative.length === 0 && absolute.length === 0) return;
    this.#pending.clock.stamp(this.#synced.isOpen);
    if (this.#synced.isOpen) this.#pending.add(relative, absolute);
  }

  /** Names a change of multi-cluster services touched (Multicluster's), relative to the zones. */
  #imported(names: readonly string[] | undefined): void {
    if (names !== undefined) this.#changed(names, []);
  }

  #changedAll(): void {
    this.#pending.clock.stamp(this.#synced.isOpen);
    this.#pending.all();
  }

  /** Observes the DNS programming latency of a watched change (programming-latency.ts), now that it
   * is answered. Objects a LIST delivers are left out: their trigger times can be hours old. */
  #programmed(kind: Kind, type: EventType, obj: KObject): void {
    if (this.#options.onProgrammed === undefined || type === "DELETED" || !this.#synced.isOpen) return;
    const p = programmingSeconds(kind, obj, (key) => this.#services.get(key)?.headless);
    if (p !== undefined) this.#options.onProgrammed(p.kind, p.seconds);
  }

  /** Hands the pending change to onChange, once synced. */
  #flush(): void {
    if (!this.#synced.isOpen) return;
    const names = this.#pending.take();
    if (names !== undefined) this.#options.onChange?.(names, this.#pending.clock.at);
  }

  #writing(): void {
    if (this.#reader) throw new Error("a reader store (Store.reader) takes no changes: its writer does");
  }

  #computeSynced(withRestored = true): boolean {
    const has = (k: Kind) => this.#listed.has(k) || (withRestored && this.#restored.has(k));
    return this.#options.waitFor.every(
      (k) =>
        has(k) ||
        (k === "endpointslices" && has("endpoints")) ||
        (k === "endpoints" && has("endpointslices")),
    );
  }

  #keysOf(kind: Kind): string[] {
    const byKind: Record<Kind, { keys(): Iterable<string> } | undefined> = {
      services: this.#services,
      endpointslices: this.#slices,
      endpoints: this.#legacy,
      namespaces: this.#namespaces,
      pods: this.#pods,
      serviceimports: undefined,
    };
    return [...(byKind[kind]?.keys() ?? [])];
  }
}
