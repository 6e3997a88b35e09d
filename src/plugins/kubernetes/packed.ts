// Compact forms of what the store holds hundreds of thousands of (about 490k endpoints and 280k
// addresses at 100k services). Node's V8 has no pointer compression: every field is 8 bytes, a
// short string about 32, and a 32-bit integer costs nothing beyond its field. So an IPv4 address is
// kept as an integer, and an endpoint's DNS label only when it is not the dashed address, which is
// worked out when asked (a dashed name from String.replace was also a tree of three strings).

import type { Endpoint, SvcPort } from "./slim-types.ts";

/** An address as a key of the store's indexes: IPv4 as a 32-bit integer, IPv6 as its canonical text. */
export type IPKey = number | string;

const IPV4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/;

/** The key of a canonical address. */
export function ipKey(ip: string): IPKey {
  const m = IPV4.exec(ip);
  if (m === null) return ip;
  return (+m[1] << 24) | (+m[2] << 16) | (+m[3] << 8) | +m[4] | 0;
}

/** The canonical text of a key. */
export function ipText(k: IPKey): string {
  if (typeof k === "string") return k;
  return `${k >>> 24}.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`;
}

/** The dashed form of an address, as endpoint and pod names use it: 10.244.4.3 -> 10-244-4-3. */
export function dashed(ip: string): string {
  return ip.replace(/[.:]/g, "-");
}

/** An endpoint as the store keeps it; reads as an Endpoint. */
export class PackedEndpoint implements Endpoint {
  readonly #ip: IPKey;
  /** The label when it is not the dashed address. */
  readonly #label: string | undefined;
  readonly ready: boolean;

  constructor(ip: string, label: string | undefined, ready: boolean) {
    this.#ip = ipKey(ip);
    this.#label = label;
    this.ready = ready;
  }

  get ip(): string {
    return ipText(this.#ip);
  }

  get name(): string {
    return this.#label ?? dashed(this.ip);
  }

  /** What a snapshot, and the store's comparisons, see: the Endpoint's fields. */
  toJSON(): Endpoint {
    return { ip: this.ip, name: this.name, ready: this.ready };
  }
}

/** Lowercase protocol names, one string each instead of one per port. */
const PROTOS: Readonly<Record<string, string>> = { TCP: "tcp", UDP: "udp", SCTP: "sctp" };

export function protoName(p: string | undefined): string {
  return PROTOS[p ?? "TCP"] ?? (p ?? "").toLowerCase();
}

/** Most services and slices list one of a few port sets: each set is kept once. Bounded, so that a
 * cluster with a distinct set per service only stops sharing, never grows the table past it. */
export class PortSets {
  readonly #sets = new Map<string, readonly SvcPort[]>();
  readonly #max: number;

  constructor(max = 4096) {
    this.#max = max;
  }

  intern(ports: readonly SvcPort[]): readonly SvcPort[] {
    const key = ports.map((p) => `${p.name}/${p.proto}/${p.port}`).join(",");
    const known = this.#sets.get(key);
    if (known !== undefined) return known;
    if (this.#sets.size >= this.#max) this.#sets.clear();
    this.#sets.set(key, ports);
    return ports;
  }
}
