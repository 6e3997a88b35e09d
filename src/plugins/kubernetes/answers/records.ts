// The answers of the Kubernetes DNS-Based Service Discovery specification (kubernetes/dns,
// docs/specification.md) for one name in one of the stanza's zones, read from the store.
//
// Every name is resolved to a node: the records it holds (all types), or nothing (NXDOMAIN). The answer
// is the node's records of the asked type, else its CNAME (ExternalName), else NODATA; negative answers
// carry the zone's SOA. A name exists exactly when it or a name below it holds records, so an existing
// namespace (`ns.svc.zone`), `svc.zone`, `pod.zone` and `_tcp.svc.ns.svc.zone` are NODATA, never
// NXDOMAIN (RFC 8020).

import type { Msg, RR } from "../../../dns/message.ts";
import { Class, Rcode, Type } from "../../../dns/constants.ts";
import { addressFromReverse, labelsBelow } from "../../../dns/name.ts";
import type { StoreView } from "../store/store-view.ts";
import type { Service } from "../model/slim-types.ts";
import type { Holding } from "../names/name-tree.ts";
import { isReverseZone, Zones } from "../names/zones.ts";
import { normalIP } from "../model/addresses.ts";
import { dashed } from "../model/addresses.ts";
import { NS_NAME } from "../store/store-view.ts";
import { addressRecords, holdingRecords } from "./record-sets.ts";
import type { Multicluster } from "../store/multicluster.ts";
import { MCS_SCHEMA_VERSION, multiclusterNode } from "./multicluster-records.ts";

/** The schema version `dns-version.<zone>` answers, as CoreDNS does. */
export const DNS_SCHEMA_VERSION = "1.1.0";
/** TTL of the dns-version record: it never changes (the spec's example and CoreDNS use 28800). */
const VERSION_TTL = 28800;
/** The SOA record's TTL is the TTL up to this, as CoreDNS caps it (plugin/backend_lookup.go). */
const SOA_MAX_TTL = 300;

export type PodMode = "disabled" | "insecure" | "verified";

export interface RecordsOptions {
  /** Every zone of the stanza, canonical: forward zones and reverse zones (in-addr.arpa, ip6.arpa). */
  zones: readonly string[];
  /** TTL of every record and the SOA minimum. */
  ttl: number;
  pods: PodMode;
  /** This server's own addresses: the name server's last resort (see #nsAddresses). */
  localIPs?: readonly string[];
  /** `multicluster`: its zones answer from ServiceImports (multicluster-records.ts). */
  multicluster?: Multicluster;
}

export interface Answer {
  rcode: number;
  answer: RR[];
  authority: RR[];
  additional: RR[];
  /** An ExternalName CNAME answered a query of another type: the target to resolve for it. */
  chase?: string;
  /** The answer depends on a spelling the store's change names do not cover: do not cache it. */
  uncacheable?: boolean;
}

/** What a name holds: its records of every type, and what goes in the additional section with them. */
interface Node {
  rrs: RR[];
  additional?: RR[];
  /** The name does not exist after all (a node only to carry `uncacheable`). */
  missing?: boolean;
  uncacheable?: boolean;
}

const EMPTY: Node = { rrs: [] };
/** A name that does not exist but may after a change the store cannot list (a zonal name). */
const OPEN_MISSING: Node = { rrs: [], missing: true, uncacheable: true };
const NO_RECORDS = Object.freeze([]) as unknown as RR[];
const NO_LABELS: readonly string[] = Object.freeze([]);

export class Records {
  readonly #store: StoreView;
  readonly #options: RecordsOptions;
  get options(): RecordsOptions {
    return this.#options;
  }
  /** PTR targets and the name server name live in the primary zone: the first forward one that is
   * not a multicluster zone. */
  readonly #zones: Zones;
  readonly #soas = new Map<string, RR>();
  readonly #nxdomains = new Map<string, Answer>();
  readonly #nodatas = new Map<string, Answer>();

  constructor(store: StoreView, o: RecordsOptions) {
    this.#store = store;
    this.#options = o;
    this.#zones = new Zones(o.zones, "kubernetes", (z) => !o.multicluster?.serves(z));
  }

  /** The zone PTR targets and the name server's name live in. */
  get primary(): string {
    return this.#zones.primary;
  }

  /** The stanza zone that holds `qname` (the most specific), or undefined. */
  zoneOf(qname: string): string | undefined {
    return this.#zones.zoneOf(qname);
  }

  /** The answer to `qname`/`qtype` in `zone` (from zoneOf). `spelled` is the zone as the client
   * spelled it: SRV targets keep it, as CoreDNS's do (their names are not compressed against the
   * question, which gives every other name the client's spelling). */
  answer(zone: string, qname: string, qtype: number, spelled = zone): Answer {
    const node = this.#node(zone, qname, qtype, spelled);
    if (node === undefined) return this.#negative(zone, Rcode.NXDOMAIN);
    if (node.missing) return withUncacheable(this.#negative(zone, Rcode.NXDOMAIN), node.uncacheable);
    let answer = qtype === Type.ANY ? node.rrs : node.rrs.filter((rr) => rr.type === qtype);
    let chase: string | undefined;
    if (answer.length === 0 && qtype !== Type.CNAME) {
      const cname = node.rrs.find((rr) => rr.type === Type.CNAME);
      if (cname) {
        answer = [cname];
        chase = (cname.data as { target: string }).target;
      }
    }
    if (answer.length === 0) return withUncacheable(this.#negative(zone, Rcode.NOERROR), node.uncacheable);
    const srv = answer.some((rr) => rr.type === Type.SRV);
    const withExtra = srv || answer.some((rr) => rr.type === Type.NS);
    return {
      rcode: Rcode.NOERROR,
      answer,
      authority: [],
      additional: withExtra ? (node.additional ?? []) : [],
      chase,
      // Targets in the client's spelling must not be replayed to another client.
      uncacheable: node.uncacheable || (srv && spelled !== zone),
    };
  }

  /** NXDOMAIN or NODATA with the zone's SOA: one object per zone, rcode and SOA record, made again
   * when the SOA changes (its serial is the store's last change), so a search-list miss allocates
   * none. Its arrays are frozen: nothing may add to a shared answer. */
  #negative(zone: string, rcode: number): Answer {
    const soa = this.soa(zone);
    const byZone = rcode === Rcode.NXDOMAIN ? this.#nxdomains : this.#nodatas;
    const kept = byZone.get(zone);
    if (kept !== undefined && kept.authority[0] === soa) return kept;
    const authority = Object.freeze([soa]) as unknown as RR[];
    const a: Answer = { rcode, answer: NO_RECORDS, authority, additional: NO_RECORDS };
    byZone.set(zone, a);
    return a;
  }

  /** The zone's SOA, after CoreDNS (plugin/backend_lookup.go): MNAME ns.dns.<zone>, the serial the
   * time of the store's last change, the minimum the TTL, and the record's own TTL the TTL up to
   * SOA_MAX_TTL, which bounds how long a resolver caches a negative answer (RFC 2308 section 5). */
  soa(zone: string): RR {
    // One record per zone and serial: a negative answer (most of what a cluster's search lists ask)
    // builds no record. Replies never change the records they hold.
    const serial = Math.floor(this.#store.modified / 1000) >>> 0;
    const kept = this.#soas.get(zone);
    if (kept !== undefined && (kept.data as { serial: number }).serial === serial) return kept;
    const rr = this.#newSoa(zone, serial);
    this.#soas.set(zone, rr);
    return rr;
  }

  #newSoa(zone: string, serial: number): RR {
    return {
      name: zone,
      type: Type.SOA,
      class: Class.IN,
      ttl: Math.min(this.#options.ttl, SOA_MAX_TTL),
      data: {
        type: Type.SOA,
        mname: join(NS_NAME, zone),
        rname: join("hostmaster", zone),
        serial,
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: this.#options.ttl,
      },
    };
  }

  /** The NS target: ns.dns.<zone>; reverse zones name the primary zone's, which resolves. */
  #nsName(zone: string): string {
    return join(NS_NAME, isReverseZone(zone) ? this.primary : zone);
  }

  #node(zone: string, qname: string, qtype: number, spelled: string): Node | undefined {
    if (qname === zone) return isReverseZone(zone) ? this.#reverseApex(zone) : this.#apex(zone);
    if (isReverseZone(zone)) return this.#reverse(qname);
    const labels = labelsBelow(qname, zone);
    const n = labels.length;
    const top = labels[n - 1];
    const mc = this.#options.multicluster?.serves(zone) ? this.#options.multicluster : undefined;
    if (n === 1) {
      if (top === "dns-version")
        return { rrs: [this.#txtVersion(qname, mc ? MCS_SCHEMA_VERSION : undefined)] };
      return top === "svc" || top === "dns" || (top === "pod" && !mc) ? EMPTY : undefined;
    }
    if (top === "dns") {
      if (n !== 2 || labels[0] !== "ns") return undefined;
      return { rrs: this.#addresses(qname, this.#nsAddresses()) };
    }
    if (top === "svc") {
      if (mc === undefined) return this.#svcTree(qname, labels, qtype, spelled);
      return this.#multicluster(mc, qname, labels, qtype, spelled);
    }
    if (top === "pod") return mc === undefined ? this.#podTree(qname, labels) : undefined;
    return undefined;
  }

  // Apart from #node, whose every call would otherwise allocate the arrow's context.
  #multicluster(
    mc: Multicluster,
    qname: string,
    labels: string[],
    qtype: number,
    spelled: string,
  ): Node | undefined {
    const withSrv = qtype === Type.SRV || qtype === Type.ANY;
    const exposed = (ns: string) => this.#store.namespaceExposed(ns);
    return multiclusterNode(mc, { qname, labels, withSrv, spelled }, this.#options.ttl, exposed);
  }

  #apex(zone: string): Node {
    const ns = this.#nsName(zone);
    return {
      rrs: [
        this.soa(zone),
        {
          name: zone,
          type: Type.NS,
          class: Class.IN,
          ttl: this.#options.ttl,
          data: { type: Type.NS, target: ns },
        },
      ],
      additional: this.#addresses(ns, this.#nsAddresses()),
    };
  }

  /** The name server's addresses, as CoreDNS finds them: those of the services that select this
   * server's own pod (a headless one's endpoints, another's cluster IPs). Failing that, the cluster
   * IPs of kube-system/kube-dns (clusterdns run outside the cluster, on its objects, answers what the
   * cluster's pods would get), and last this server's own addresses, as CoreDNS does. */
  #nsAddresses(): readonly string[] {
    const own = this.#store.localServices();
    if (own.length > 0) {
      return own.flatMap((svc) =>
        svc.headless
          ? this.#store.endpoints(svc).flatMap((g) => g.endpoints.map((e) => e.ip))
          : svc.clusterIPs,
      );
    }
    const kubeDns = this.#store.service("kube-system", "kube-dns")?.clusterIPs ?? [];
    return kubeDns.length > 0 ? kubeDns : (this.#options.localIPs ?? []);
  }

  #txtVersion(name: string, version = DNS_SCHEMA_VERSION): RR {
    return {
      name,
      type: Type.TXT,
      class: Class.IN,
      ttl: VERSION_TTL,
      data: { type: Type.TXT, strings: [version] },
    };
  }

  /** Names below <zone> ending in `svc`: labels are [..., service, namespace, "svc"], and what a name
   * below a service holds is names/service-names.ts's. SRV records at the service's own name are made
   * only for the queries that can use them (SRV, ANY). */
  #svcTree(qname: string, labels: string[], qtype: number, spelled: string): Node | undefined {
    const n = labels.length;
    const ns = labels[n - 2];
    if (!this.#store.namespaceExposed(ns)) return undefined;
    if (n === 2) return EMPTY;
    const svc = this.#store.service(ns, labels[n - 3]);
    const below = n === 3 ? NO_LABELS : labels.slice(0, n - 3);
    if (!svc) return this.#missing(below);
    const withSrv = qtype === Type.SRV || qtype === Type.ANY;
    const h = this.#store.names.holding(svc, this.#store.endpoints(svc), below, withSrv);
    if (h === undefined) return this.#missing(below);
    return this.#holdingNode(qname, svc, h, spelled);
  }

  // No closures in #svcTree: their context would be allocated for every question, found or not (random
  // names under a namespace, which no cache absorbs, go through it).
  #missing(below: readonly string[]): Node | undefined {
    return this.#store.names.isOpen(below) ? OPEN_MISSING : undefined;
  }

  #holdingNode(qname: string, svc: Service, h: Holding, spelled: string): Node {
    // SRV targets keep the client's spelling of the zone, as CoreDNS's do.
    const rel = `${svc.name}.${svc.ns}.svc`;
    const target = (host?: string) => join(host === undefined ? rel : `${host}.${rel}`, spelled);
    return { ...holdingRecords(qname, h, target, this.#options.ttl), uncacheable: h.unlisted };
  }

  /** Names below <zone> ending in `pod`: [address, namespace, "pod"] (spec 2.6, deprecated). */
  #podTree(qname: string, labels: string[]): Node | undefined {
    if (this.#options.pods === "disabled") return undefined;
    const n = labels.length;
    const ns = labels[n - 2];
    if (!this.#store.namespaceExposed(ns)) return undefined;
    if (n === 2) return EMPTY;
    if (n !== 3) return undefined;
    const ip = podAddress(labels[0]);
    if (ip === undefined) return undefined;
    const rrs = this.#addresses(qname, [ip]);
    if (this.#options.pods === "verified") {
      // The store names a change after the canonical spelling only: other spellings must not be cached.
      const uncacheable = labels[0] !== dashed(ip);
      if (!this.#store.podsByIP(ip).some((p) => p.ns === ns)) return { rrs: [], missing: true, uncacheable };
      return { rrs, uncacheable };
    }
    return { rrs };
  }

  /** Reverse names: PTR for published addresses; names above them are empty non-terminals. */
  /** A reverse zone of one address (a /32 or /128 prefix) holds that address's PTR at its apex. */
  #reverseApex(zone: string): Node {
    const apex = this.#apex(zone);
    const ptr = this.#reverse(zone);
    return ptr === undefined || ptr.rrs.length === 0 ? apex : { ...apex, rrs: [...apex.rrs, ...ptr.rrs] };
  }

  #reverse(qname: string): Node | undefined {
    const ip = addressFromReverse(qname);
    if (ip === undefined) return this.#store.reverseParentExists(qname) ? EMPTY : undefined;
    const targets = this.#store.ptr(ip);
    if (targets.length === 0) return undefined;
    return {
      rrs: targets.map((t) => ({
        name: qname,
        type: Type.PTR,
        class: Class.IN,
        ttl: this.#options.ttl,
        data: { type: Type.PTR, target: join(t, this.primary) },
      })),
    };
  }

  #addresses(name: string, ips: readonly string[]): RR[] {
    return addressRecords(name, ips, this.#options.ttl);
  }
}

/** A shared negative answer, copied only to mark it uncacheable. */
function withUncacheable(a: Answer, uncacheable: boolean | undefined): Answer {
  return uncacheable ? { ...a, uncacheable } : a;
}

/** The address a pod name stands for, after CoreDNS: `1-2-3-4` is IPv4, anything else with dashes for
 * colons is IPv6 (`fd00-10-244--5`). */
export function podAddress(label: string): string | undefined {
  const dashes = label.split("-").length - 1;
  const text =
    dashes === 3 && !label.includes("--") ? label.replaceAll("-", ".") : label.replaceAll("-", ":");
  return normalIP(text);
}

function join(relative: string, zone: string): string {
  return zone === "." ? `${relative}.` : `${relative}.${zone}`;
}

/** Resolves an ExternalName target through the server (SetupContext.lookup) and appends what it
 * answered; a target nothing answers (or an error) leaves the CNAME alone for the client to follow.
 * A denial the server is authoritative for ends the chain as it ends the target: its rcode (RFC 6604,
 * NXDOMAIN for a target that does not exist) and its zone's SOA (RFC 2308), as a zone's CNAME does. */
export async function chase(
  a: Answer,
  qtype: number,
  lookup: (name: string, qtype: number) => Promise<Msg>,
): Promise<void> {
  if (a.chase === undefined) return;
  try {
    const r = await lookup(a.chase, qtype);
    if (r.rcode !== Rcode.NOERROR && r.rcode !== Rcode.NXDOMAIN) return;
    if (r.rcode === Rcode.NXDOMAIN && !r.aa) return;
    appendUntilRepeat(a.answer, r.answer);
    const denied = r.answer.every((rr) => rr.type === Type.CNAME);
    if (r.aa && denied && r.authority.some((rr) => rr.type === Type.SOA)) {
      a.rcode = r.rcode;
      a.authority = r.authority;
    }
  } catch {
    // the CNAME alone is still a correct answer
  }
}

/** Appends `more` to `answer` up to the first CNAME whose owner already has one there: ExternalNames
 * in a loop chase each other until the lookups nest too deep, and each level brings the whole chain
 * again. A record is never repeated (RFC 2181 section 5). */
function appendUntilRepeat(answer: RR[], more: readonly RR[]): void {
  for (const rr of more) {
    if (
      rr.type === Type.CNAME &&
      answer.some((had) => had.type === Type.CNAME && sameName(had.name, rr.name))
    )
      return;
    answer.push(rr);
  }
}

function sameName(a: string, b: string): boolean {
  return a.length === b.length && a.toLowerCase() === b.toLowerCase();
}
