// Search-list walks, seen from the server. A pod's resolver (ndots:5, search <ns>.svc.Z svc.Z Z ...)
// asks a name with fewer than 5 dots under each search domain before the name as is: for
// api.github.com from namespace shop, api.github.com.shop.svc.cluster.local (NXDOMAIN), then
// api.github.com.svc.cluster.local, api.github.com.cluster.local, any domain of the node, and last
// api.github.com; glibc sends A and AAAA at each step. So a walk starts with an NXDOMAIN for
// NAME.<label>.svc.Z (the first search domain: the namespace), goes on with NXDOMAINs for NAME.<more>
// from the same client, and ends with the first query for NAME or NAME.<more> that is not an
// NXDOMAIN, or for NAME itself whatever its answer. What it cost is the NXDOMAINs before the end.
//
// State per client is a bucket of WAYS slots in a direct-mapped table (by the address's hash): a walk
// whose slot another takes is lost (counted as never ended), which bounds memory whatever the clients.
// The first step is told from a later step of a shorter name (api.github.com.svc.cluster.local looks
// like api.github + namespace com) by the client's namespace, when it is a pod, and by the walks
// already under way, which a later step continues.
// A walk not ended within WALK_MS is dropped: a resolver does its walk in one go.

import { Rcode } from "../../dns/constants.ts";

const SLOTS = 4096;
/** Walk slots per client address (a direct-mapped bucket of them). */
const WAYS = 4;
/** The longest NAME followed, in octets; a longer one is not followed. */
const MAX_WANTED = 128;
const WALK_MS = 5000;

/** What observe() found when a walk ended (read right after it returns true). */
export interface WalkEnd {
  /** Octets of the wanted NAME: ended.wire[0..length). */
  wire: Uint8Array;
  length: number;
  /** NXDOMAINs the walk cost. */
  wasted: number;
  /** The name was found as asked (outside the search domains). */
  asIs: boolean;
  /** Labels of NAME minus one. */
  dots: number;
}

export class Walks {
  readonly #zone: Uint8Array;
  readonly #zoneLabels: number;
  readonly #addr: string[] = new Array<string>(SLOTS).fill("");
  readonly #wanted = new Uint8Array(SLOTS * MAX_WANTED);
  readonly #length = new Uint8Array(SLOTS);
  readonly #nx = new Uint16Array(SLOTS);
  readonly #since = new Float64Array(SLOTS);
  /** Label starts of the name being looked at. */
  readonly #labels = new Int32Array(128);
  readonly ended: WalkEnd = { wire: new Uint8Array(MAX_WANTED), length: 0, wasted: 0, asIs: false, dots: 0 };

  /** `zone`: the cluster domain in wire form, root label included (\7cluster\5local\0). */
  constructor(zone: Uint8Array) {
    this.#zone = zone;
    let n = 0;
    for (let i = 0; zone[i] !== 0; i += zone[i] + 1) n++;
    this.#zoneLabels = n;
  }

  /** The time in ms, moved on by the owner's timer (a walk's timeout needs no finer clock). */
  now = Date.now();
  /** The query to look at, filled by the caller before observe() (no object per query). */
  readonly q = {
    address: "",
    /** The address's hash. */
    h: 0,
    /** The name: wire[0..length), without its root label. */
    wire: new Uint8Array(0) as Uint8Array,
    length: 0,
    rcode: 0,
    /** The client's namespace when it is a pod ("" when not known): a walk starts in it. */
    namespace: "",
  };

  /** Looks at the query in `q`. True when it ended a walk (see `ended`). A client has WAYS walk slots,
   * since a pod often looks up several names at once. */
  observe(): boolean {
    const { address, h, wire, length, rcode } = this.q;
    const now = this.now;
    const first = (h & (SLOTS / WAYS - 1)) * WAYS;
    const nx = rcode === Rcode.NXDOMAIN;
    let free = -1;
    let oldest = first;
    for (let slot = first; slot < first + WAYS; slot++) {
      if (this.#addr[slot] !== address || now - this.#since[slot] >= WALK_MS) {
        if (free < 0) free = slot;
        continue;
      }
      if (this.#since[slot] < this.#since[oldest]) oldest = slot;
      const n = this.#length[slot];
      if (length >= n && this.#startsWith(slot, wire, n) && (length === n || wire[n] !== 0)) {
        if (nx && length > n) {
          this.#nx[slot]++;
          return false;
        }
        this.#end(slot, length === n);
        return true;
      }
    }
    if (!nx) return false;
    const start = this.#wantedLength(wire, length);
    if (start <= 0 || start > MAX_WANTED) return false;
    const slot = free >= 0 ? free : oldest;
    this.#addr[slot] = address;
    this.#since[slot] = now;
    this.#length[slot] = start;
    this.#nx[slot] = 1;
    const base = slot * MAX_WANTED;
    for (let i = 0; i < start; i++) this.#wanted[base + i] = wire[i];
    return false;
  }

  #startsWith(slot: number, wire: Uint8Array, n: number): boolean {
    const base = slot * MAX_WANTED;
    for (let i = 0; i < n; i++) if (this.#wanted[base + i] !== wire[i]) return false;
    return true;
  }

  #end(slot: number, asIs: boolean): void {
    const e = this.ended;
    const n = this.#length[slot];
    const base = slot * MAX_WANTED;
    let dots = -1;
    for (let i = 0; i < n; i += this.#wanted[base + i] + 1) dots++;
    for (let i = 0; i < n; i++) e.wire[i] = this.#wanted[base + i];
    e.length = n;
    e.wasted = this.#nx[slot];
    e.asIs = asIs;
    e.dots = dots;
    this.#addr[slot] = "";
  }

  /** For NAME.<label>.svc.<zone>: the octets of NAME; else 0. */
  #wantedLength(wire: Uint8Array, length: number): number {
    const labels = this.#labels;
    let n = 0;
    for (let i = 0; i < length && n < labels.length; i += wire[i] + 1) labels[n++] = wire[i];
    // labels[] held lengths; turn them into starts.
    let at = 0;
    for (let k = 0; k < n; k++) {
      const len = labels[k];
      labels[k] = at;
      at += len + 1;
    }
    const z = this.#zoneLabels;
    if (n < z + 3) return 0;
    const zoneAt = labels[n - z];
    if (length - zoneAt !== this.#zone.length - 1) return 0;
    for (let i = 0; i < length - zoneAt; i++) if (wire[zoneAt + i] !== this.#zone[i]) return 0;
    const svc = labels[n - z - 1];
    if (wire[svc] !== 3 || wire[svc + 1] !== 0x73 || wire[svc + 2] !== 0x76 || wire[svc + 3] !== 0x63)
      return 0;
    const ns = labels[n - z - 2];
    const want = this.q.namespace;
    if (want !== "") {
      if (wire[ns] !== want.length) return 0;
      for (let i = 0; i < want.length; i++) if (wire[ns + 1 + i] !== want.charCodeAt(i)) return 0;
    }
    return ns;
  }

  get bytes(): number {
    return this.#wanted.byteLength + this.#length.byteLength + this.#nx.byteLength + this.#since.byteLength;
  }
}
