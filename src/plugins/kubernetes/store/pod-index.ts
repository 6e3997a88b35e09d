// The store's pods (`pods verified`, autopath): each pod's slim record, and the pods by address, which
// answer "is there a pod with this address in this namespace" and "which namespace asked". Both are
// tables (./tables.ts), by value: a pod list read back is copied, changed and stored again.

import type { PodRef, SlimPod } from "../model/slim-types.ts";
import { sameJSON } from "../model/object-key.ts";
import { dashed } from "./packed.ts";
import type { Table, Tables } from "../../../offheap/table.ts";
import { storeTable } from "./tables.ts";

export class PodIndex {
  readonly #pods: Table<SlimPod>;
  readonly #byIP: Table<readonly PodRef[]>;

  constructor(tables: Tables) {
    this.#pods = storeTable(tables, "pods");
    this.#byIP = storeTable(tables, "pods.byIP");
  }

  get size(): number {
    return this.#pods.size;
  }

  keys(): string[] {
    return [...this.#pods.keys()];
  }

  entries(): [string, SlimPod][] {
    return [...this.#pods.entries()];
  }

  /** Sets (or with undefined deletes) the pod `key`; returns the pod names whose answers changed
   * (`a-b-c-d.ns.pod`, relative to the zone), none when nothing did. */
  apply(key: string, next: SlimPod | undefined): string[] {
    const prev = this.#pods.get(key);
    if (prev === next || (prev && next && sameJSON(prev, next))) return [];
    // prev is a copy: the pods by address are matched by namespace and name, never by identity.
    for (const ip of prev?.ips ?? []) {
      const list = this.#byIP.get(ip)?.filter((p) => !(p.ns === prev!.ns && p.name === prev!.name));
      if (list && list.length > 0) this.#byIP.set(ip, list);
      else this.#byIP.delete(ip);
    }
    if (next) {
      this.#pods.set(key, next);
      for (const ip of next.ips) {
        const ref: { -readonly [K in keyof PodRef]: PodRef[K] } = { ns: next.ns, name: next.name };
        if (next.hostNetwork) ref.hostNetwork = true;
        if (next.ownSearch) ref.ownSearch = true;
        this.#byIP.set(ip, [...(this.#byIP.get(ip) ?? []), ref]);
      }
    } else this.#pods.delete(key);
    const names: string[] = [];
    for (const p of [prev, next]) {
      if (p) for (const ip of p.ips) names.push(`${dashed(ip)}.${p.ns}.pod`);
    }
    return names;
  }

  byIP(ip: string): readonly PodRef[] {
    return this.#byIP.get(ip) ?? [];
  }

  /** The namespace of the pod that owns `ip`, when that is certain: one or more pods, all in one
   * namespace and none on the host network. Undefined for an unknown address, a node's address, an
   * address two namespaces claim (reused before the old pod's deletion arrived), or a pod whose search
   * list is its own (dnsConfig), which its namespace does not tell. */
  clientNamespace(ip: string): string | undefined {
    const pods = this.#byIP.get(ip);
    if (pods === undefined) return undefined;
    const ns = pods[0].ns;
    for (const p of pods) if (p.hostNetwork || p.ownSearch || p.ns !== ns) return undefined;
    return ns;
  }

  /** A rough estimate of the heap it takes. */
  bytes(): number {
    let b = 0;
    for (const p of this.#pods.values()) b += 64 + p.ns.length + p.name.length + p.ips.length * 40;
    return b;
  }
}
