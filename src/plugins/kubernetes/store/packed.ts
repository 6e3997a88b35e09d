// Compact forms of what the store holds hundreds of thousands of (about 490k endpoints and 280k
// addresses at 100k services). Node's V8 has no pointer compression: every field is 8 bytes, a
// short string about 32, and a 32-bit integer costs nothing beyond its field. So an IPv4 address is
// kept as an integer, and an endpoint's DNS label only when it is not the dashed address, which is
// worked out when asked (a dashed name from String.replace was also a tree of three strings).

import type { Endpoint, SvcPort } from "../model/slim-types.ts";
import { ipv4Bits } from "../../../dns/ipv4.ts";

/** An address as a key of the store's indexes: IPv4 as a 32-bit integer, IPv6 as its canonical text. */
export type IPKey = number | string;

/** The key of an address: its 32-bit integer when it is IPv4 in canonical form; anything else is
 * kept as its text, so that ipText gives back exactly what came in. */
export function ipKey(ip: string): IPKey {
  const bits = ipv4Bits(ip);
  return bits < 0 ? ip : bits | 0;
}

/** The canonical text of a key. */
export function ipText(k: IPKey): string {
  if (typeof k === "string") return k;
  return `${OCTETS[k >>> 24]}.${OCTETS[(k >>> 16) & 255]}.${OCTETS[(k >>> 8) & 255]}.${OCTETS[k & 255]}`;
}

import { dashed } from "../model/addresses.ts";

export { dashed } from "../model/addresses.ts";

/** The dashed form of a key's address, an IPv4 one made from its integer (a third of the time of
 * the text's replace). */
export function dashedKey(k: IPKey): string {
  if (typeof k === "string") return dashed(k);
  return `${OCTETS[k >>> 24]}-${OCTETS[(k >>> 16) & 255]}-${OCTETS[(k >>> 8) & 255]}-${OCTETS[k & 255]}`;
}

/** The decimal text of every octet, made once: an address is four reads and the joins. */
const OCTETS = Array.from({ length: 256 }, (_, i) => String(i));

/** Where an endpoint runs: its zone and the zones its topology hints name. */
export interface Topology {
  readonly zone?: string;
  readonly forZones?: readonly string[];
}

/** The distinct topologies one store's endpoints have, each kept once and named by its place here:
 * a cluster has a handful (zones times hint sets), so an endpoint carries a small integer beside its
 * ready bit instead of a field of its own. Index 0 is "none". Past MAX_TOPOLOGIES new ones are not
 * kept: such an endpoint reads as having no zone. The table lives as long as its store's endpoints
 * (a reload's new store starts its own), so it never outgrows one cluster's topologies. */
export class Topologies {
  readonly #list: Topology[] = [{}];
  readonly #index = new Map<string, number>([["", 0]]);

  /** The index of `t`, added when new. */
  indexOf(t: Topology | undefined): number {
    if (t === undefined || (t.zone === undefined && t.forZones === undefined)) return 0;
    const key = `${t.zone ?? ""}/${t.forZones?.join(",") ?? "-"}`;
    let i = this.#index.get(key);
    if (i === undefined) {
      if (this.#list.length >= MAX_TOPOLOGIES) return 0;
      i = this.#list.length;
      // Its two fields only: `t` may be a whole endpoint (Slimmer.pack passes one read from a
      // snapshot), whose address and name toJSON would then lend every endpoint of this topology.
      const { zone, forZones } = t;
      this.#list.push(
        forZones === undefined ? { zone } : zone === undefined ? { forZones } : { zone, forZones },
      );
      this.#index.set(key, i);
    }
    return i;
  }

  at(i: number): Topology {
    return this.#list[i];
  }
}

const MAX_TOPOLOGIES = 1 << 16;

/** How an endpoint is packed: a new one per store (slim.ts's Slimmer), whose topologies it reads. */
export type PackedEndpoint = new (
  ip: string,
  label: string | undefined,
  ready: boolean,
  topology?: Topology,
) => Endpoint;

/** The class of the endpoints of one store, which keeps their topologies in `topologies`: the table
 * hangs off the class, so an endpoint pays no field for it. */
export function packedEndpoint(topologies: Topologies): PackedEndpoint {
  return class implements Endpoint {
    readonly #ip: IPKey;
    /** The label when it is not the dashed address. */
    readonly #label: string | undefined;
    /** Bit 0: ready; the rest: the index of its topology. A small integer, stored in the field itself. */
    readonly #bits: number;

    constructor(ip: string, label: string | undefined, ready: boolean, topology?: Topology) {
      this.#ip = ipKey(ip);
      this.#label = label;
      this.#bits = (topologies.indexOf(topology) << 1) | (ready ? 1 : 0);
    }

    get ip(): string {
      return ipText(this.#ip);
    }

    get name(): string {
      return this.#label ?? dashedKey(this.#ip);
    }

    get ready(): boolean {
      return (this.#bits & 1) === 1;
    }

    get zone(): string | undefined {
      return topologies.at(this.#bits >>> 1).zone;
    }

    get forZones(): readonly string[] | undefined {
      return topologies.at(this.#bits >>> 1).forZones;
    }

    /** What a snapshot, and the store's comparisons, see: the Endpoint's fields. */
    toJSON(): Endpoint {
      const i = this.#bits >>> 1;
      const e = { ip: this.ip, name: this.name, ready: this.ready };
      return i === 0 ? e : { ...e, ...topologies.at(i) };
    }
  };
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
