// Who a client address is: the pod that holds it, its namespace and the workload that owns it, kept
// from a watch of Pods (the kubernetes plugin's reflector, its own Sink). Rows are numbered once,
// when a workload is first seen, so the query path only looks an address up (one Map.get of the
// string the engine already made) and bumps typed-array counters by row.
//
// The owner comes from the pod alone, so only Pods are watched (no ReplicaSets, no Jobs; RBAC: pods
// list/watch). A pod owned by ReplicaSet N with label pod-template-hash H where N = D + "-" + H
// belongs to Deployment D (the Deployment controller names its ReplicaSets so); a Job named
// C-<8+ digits> (the minutes of its schedule) to CronJob C; StatefulSet, DaemonSet and other owners
// as they are; a pod without a controller is its own workload.

import type { EventType, Kind, KObject, KPod, Sink } from "../kubernetes/model/source.ts";

/** Rows every table has: who is not a pod, and what no longer fits. */
export const UNKNOWN = 0;
export const NODE = 1;
export const HOST_NETWORK = 2;
export const OTHER = 3;
const SPECIAL = ["(unknown)", "(node)", "(hostNetwork)", "(other)"];

/** Rows made and addresses moved, as the main thread posts them to the workers' copies. */
export interface MirrorUpdate {
  rows: [number, WorkloadRow][];
  addresses: [string, number][];
  synced: boolean;
}

export interface WorkloadRow {
  namespace: string;
  /** "Deployment", "StatefulSet", ...; "" for the special rows. */
  kind: string;
  name: string;
}

interface OwnerRef {
  kind?: string;
  name?: string;
  controller?: boolean;
}

interface WatchedPod extends KPod {
  metadata: KPod["metadata"] & { ownerReferences?: OwnerRef[] };
  status?: KPod["status"] & { hostIP?: string };
}

interface Held {
  ips: string[];
  row: number;
  hostIP: string | undefined;
  hostNetwork: boolean;
  /** The list generation that last saw it (a relist sweeps the others). */
  seen: number;
}

/** The workload a pod belongs to, by its owner references (see the file comment). */
export function ownerOf(pod: WatchedPod): { kind: string; name: string } {
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller === true);
  if (owner?.kind === undefined || owner.name === undefined) return { kind: "Pod", name: pod.metadata.name };
  const hash = pod.metadata.labels?.["pod-template-hash"];
  if (owner.kind === "ReplicaSet" && hash !== undefined && owner.name.endsWith(`-${hash}`)) {
    return { kind: "Deployment", name: owner.name.slice(0, -hash.length - 1) };
  }
  const scheduled = /^(.+)-\d{8,}$/.exec(owner.name);
  if (owner.kind === "Job" && scheduled !== null) return { kind: "CronJob", name: scheduled[1] };
  return { kind: owner.kind, name: owner.name };
}

/** The addresses a client may come from for one IP: as is, and as a dual-stack socket shows IPv4. */
function spellings(ip: string): string[] {
  return ip.includes(":") ? [ip] : [ip, `::ffff:${ip}`];
}

export class Workloads implements Sink {
  readonly capacity: number;
  readonly rows: WorkloadRow[] = SPECIAL.map((name) => ({ namespace: "", kind: "", name }));
  /** Row -> its namespace's number in `namespaces` (-1 for the special rows). */
  readonly namespaceOf: Int32Array;
  readonly namespaces: string[] = [];
  readonly #namespaceIds = new Map<string, number>();
  readonly #rowIds = new Map<string, number>();
  /** Client address -> row. */
  readonly #byAddress = new Map<string, number>();
  /** Host IP -> how many hostNetwork pods it has (a node's address is NODE or HOST_NETWORK). */
  readonly #hosts = new Map<string, number>();
  readonly #pods = new Map<string, Held>();
  #generation = 0;
  /** Pods whose workload did not fit (counted under OTHER). */
  overflow = 0;
  synced = false;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.namespaceOf = new Int32Array(capacity).fill(-1);
  }

  /** On the main thread with workers: told every row made and every address that changed row (-1:
   * gone), so the workers' copies number rows alike (threads.ts). */
  mirror: ((m: MirrorUpdate) => void) | undefined;

  /** What a worker's copy needs to start from. */
  mirrorState(): MirrorUpdate {
    return {
      rows: this.rows.slice(SPECIAL.length).map((r, i) => [i + SPECIAL.length, r]),
      addresses: [...this.#byAddress],
      synced: this.synced,
    };
  }

  /** In a worker: takes the main thread's rows and addresses (no pods are watched here). */
  applyMirror(m: MirrorUpdate): void {
    for (const [row, r] of m.rows) {
      if (row >= this.capacity) continue;
      while (this.rows.length <= row) this.rows.push({ namespace: "", kind: "", name: "(other)" });
      this.rows[row] = r;
    }
    for (const [address, row] of m.addresses) {
      if (row < 0 || row >= this.capacity) this.#byAddress.delete(address);
      else this.#byAddress.set(address, row);
    }
    this.synced ||= m.synced;
  }

  #set(address: string, row: number): void {
    if (row < 0) this.#byAddress.delete(address);
    else this.#byAddress.set(address, row);
    this.mirror?.({ rows: [], addresses: [[address, row]], synced: this.synced });
  }

  /** The row of a client address: a pod's workload, a node, or UNKNOWN. */
  rowOf(address: string): number {
    return this.#byAddress.get(address) ?? UNKNOWN;
  }

  get pods(): number {
    return this.#pods.size;
  }

  listStart(kind: Kind): void {
    if (kind === "pods") this.#generation++;
  }

  listDone(kind: Kind): void {
    if (kind !== "pods") return;
    for (const [key, held] of this.#pods) if (held.seen !== this.#generation) this.#drop(key, held);
    this.synced = true;
    this.mirror?.({ rows: [], addresses: [], synced: true });
  }

  apply(kind: Kind, type: EventType, obj: KObject): void {
    if (kind !== "pods") return;
    const pod = obj as WatchedPod;
    const key = `${pod.metadata.namespace ?? ""}/${pod.metadata.name}`;
    const old = this.#pods.get(key);
    if (old !== undefined) this.#drop(key, old);
    if (type === "DELETED") return;
    const hostNetwork = pod.spec?.hostNetwork === true;
    const hostIP = pod.status?.hostIP;
    const ips = hostNetwork ? [] : (pod.status?.podIPs?.map((p) => p.ip) ?? [pod.status?.podIP ?? ""]);
    const held: Held = {
      ips: ips.filter((ip) => ip !== ""),
      row: OTHER,
      hostIP,
      hostNetwork,
      seen: this.#generation,
    };
    if (held.ips.length > 0) held.row = this.#rowFor(pod.metadata.namespace ?? "", ownerOf(pod));
    for (const ip of held.ips) for (const s of spellings(ip)) this.#set(s, held.row);
    if (hostIP !== undefined) {
      const n = (this.#hosts.get(hostIP) ?? 0) + (hostNetwork ? 1 : 0);
      this.#hosts.set(hostIP, n);
      this.#markHost(hostIP, n);
    }
    this.#pods.set(key, held);
  }

  #drop(key: string, held: Held): void {
    this.#pods.delete(key);
    for (const ip of held.ips) {
      for (const s of spellings(ip)) if (this.#byAddress.get(s) === held.row) this.#set(s, -1);
    }
    if (held.hostIP !== undefined && held.hostNetwork) {
      const n = (this.#hosts.get(held.hostIP) ?? 1) - 1;
      this.#hosts.set(held.hostIP, n);
      this.#markHost(held.hostIP, n);
    }
  }

  /** A node's address: HOST_NETWORK while a hostNetwork pod runs there, else NODE (a pod address
   * reused by a node is left to the pod). */
  #markHost(ip: string, hostNetworkPods: number): void {
    for (const s of spellings(ip)) {
      const now = this.#byAddress.get(s);
      if (now === undefined || now === NODE || now === HOST_NETWORK) {
        this.#set(s, hostNetworkPods > 0 ? HOST_NETWORK : NODE);
      }
    }
  }

  #rowFor(namespace: string, owner: { kind: string; name: string }): number {
    const key = `${namespace}/${owner.kind}/${owner.name}`;
    let row = this.#rowIds.get(key);
    if (row !== undefined) return row;
    if (this.rows.length >= this.capacity) {
      this.overflow++;
      return OTHER;
    }
    row = this.rows.length;
    this.rows.push({ namespace, kind: owner.kind, name: owner.name });
    this.mirror?.({ rows: [[row, this.rows[row]]], addresses: [], synced: this.synced });
    let ns = this.#namespaceIds.get(namespace);
    if (ns === undefined) {
      ns = this.namespaces.length;
      this.namespaces.push(namespace);
      this.#namespaceIds.set(namespace, ns);
    }
    this.namespaceOf[row] = ns;
    this.#rowIds.set(key, row);
    return row;
  }

  /** "shop/Deployment/checkout", or the special row's name. */
  label(row: number): string {
    const r = this.rows[row];
    return r.kind === "" ? r.name : `${r.namespace}/${r.kind.toLowerCase()}/${r.name}`;
  }
}
