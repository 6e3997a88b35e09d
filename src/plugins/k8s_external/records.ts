// The names k8s_external publishes, after CoreDNS's plugin (plugin/k8s_external and the kubernetes
// plugin's External side), read through the kubernetes plugin's Externaler (external-offer.ts):
//   SERVICE.NS.ZONE                 A/AAAA of the service's external addresses (spec.externalIPs, load
//                                   balancer ingress); a CNAME to a load balancer known by hostname only
//   SERVICE.NS.ZONE SRV             every port, to SERVICE.NS.ZONE (CoreDNS matches an empty port and
//                                   protocol against all)
//   _PORT._PROTO.SERVICE.NS.ZONE    SRV of one named port
//   with `headless`: a headless service's ready endpoints as SERVICE.NS.ZONE, ENDPOINT.SERVICE.NS.ZONE
//   and SRV to the endpoint names
//   ZONE                            SOA, NS ns1.APEX.ZONE
//   ns1.APEX.ZONE                   the external addresses of the services that select this server
//   reverse zones among ZONES       PTR of an external address to SERVICE.NS.<first forward zone>
// Negative answers carry the zone's SOA; every answer is authoritative.

import type { RR } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { addressFromReverse, join } from "../../dns/name.ts";
import type { Answer } from "../kubernetes/answers/records.ts";
import type { Externaler } from "../kubernetes/external-offer.ts";
import { isReverseZone, Zones } from "../kubernetes/names/zones.ts";
import type { Service, SvcPort } from "../kubernetes/model/slim-types.ts";
import { addressRecords, srvSet, type SrvEntry } from "../kubernetes/answers/record-sets.ts";

export interface ExternalOptions {
  /** Every zone of the plugin, canonical: forward zones and reverse zones. */
  zones: readonly string[];
  /** The label of the name servers' subdomain: ns1.APEX.ZONE (`apex`, default "dns"). */
  apex: string;
  ttl: number;
  /** Publish headless services' endpoints (`headless`). */
  headless: boolean;
}

/** What one name publishes: targets (the service's name, or an endpoint's) with their host (an
 * address, or a hostname ending in ".") and the ports asked for. No port means addresses, no SRV. */
interface Entry {
  target: string;
  host: string;
  ports: readonly SvcPort[];
}

const HOSTMASTER = "hostmaster";
const NS = "ns1";

export class ExternalRecords {
  readonly #cluster: Externaler;
  readonly #options: ExternalOptions;
  /** Where PTR targets live: the first forward zone. */
  readonly #zones: Zones;

  constructor(cluster: Externaler, o: ExternalOptions) {
    this.#cluster = cluster;
    this.#options = o;
    this.#zones = new Zones(o.zones, "k8s_external");
  }

  zoneOf(qname: string): string | undefined {
    return this.#zones.zoneOf(qname);
  }

  /** The answer to `qname`/`qtype` in `zone`; `spelled` is the zone as the client wrote it, which SRV
   * targets keep (see the kubernetes plugin's records.ts). */
  answer(zone: string, qname: string, qtype: number, spelled = zone): Answer {
    if (qname === zone) return this.#apex(zone, qtype);
    if (isReverseZone(zone)) return this.#reverse(zone, qname, qtype);
    const labels = qname.slice(0, qname.length - (zone === "." ? 1 : zone.length + 1)).split(".");
    if (labels[labels.length - 1] === this.#options.apex) return this.#subApex(zone, labels, qtype);
    const found = this.#lookup(labels, spelled);
    if (found === undefined) return this.#negative(zone, Rcode.NXDOMAIN);
    const owner = qname;
    let answer: RR[] = [];
    let additional: RR[] = [];
    let chase: string | undefined;
    const srvName = labels.length === 4;
    if ((qtype === Type.A || qtype === Type.AAAA) && !srvName) {
      const ips = found.map((e) => e.host).filter((h) => !h.endsWith("."));
      answer = addressRecords(owner, ips, this.#options.ttl).filter((rr) => rr.type === qtype);
      // A load balancer known only by its hostname: a CNAME to it, followed as ExternalName's is.
      const host = found.find((e) => e.host.endsWith("."))?.host;
      if (ips.length === 0 && host !== undefined) {
        answer = [this.#rr(owner, { type: Type.CNAME, target: host })];
        chase = host;
      }
    } else if (qtype === Type.SRV) {
      const entries: SrvEntry[] = [];
      for (const e of found) {
        const ip = e.host.endsWith(".") ? undefined : e.host;
        for (const p of e.ports)
          entries.push({ port: p.port, target: ip === undefined ? e.host : e.target, ip });
      }
      if (entries.length > 0) ({ rrs: answer, additional } = srvSet(owner, entries, this.#options.ttl));
    }
    if (answer.length === 0) return this.#negative(zone, Rcode.NOERROR);
    const srv = qtype === Type.SRV;
    return {
      rcode: Rcode.NOERROR,
      answer,
      authority: [],
      additional,
      chase,
      uncacheable: srv && spelled !== zone,
    };
  }

  /** The zone's SOA, as CoreDNS's k8s_external writes it: ns1.APEX.ZONE, hostmaster.APEX.ZONE, the
   * serial the time of the store's last change. */
  soa(zone: string): RR {
    const apex = join(this.#options.apex, zone);
    return this.#rr(zone, {
      type: Type.SOA,
      mname: join(NS, apex),
      rname: join(HOSTMASTER, apex),
      serial: Math.floor(this.#cluster.modified / 1000) >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: this.#options.ttl,
    });
  }

  #apex(zone: string, qtype: number): Answer {
    if (qtype === Type.SOA) return positive([this.soa(zone)]);
    if (qtype !== Type.NS) return this.#negative(zone, Rcode.NOERROR);
    const ns = join(NS, join(this.#options.apex, zone));
    return positive([this.#rr(zone, { type: Type.NS, target: ns })], this.#nsRecords(ns));
  }

  /** APEX.ZONE (an empty non-terminal) and ns1.APEX.ZONE; nothing else exists below APEX. */
  #subApex(zone: string, labels: string[], qtype: number): Answer {
    if (labels.length === 1) return this.#negative(zone, Rcode.NOERROR);
    if (labels.length !== 2 || labels[0] !== NS) return this.#negative(zone, Rcode.NXDOMAIN);
    const name = join(`${NS}.${this.#options.apex}`, zone);
    const answer = this.#nsRecords(name).filter((rr) => rr.type === qtype);
    return answer.length > 0 ? positive(answer) : this.#negative(zone, Rcode.NOERROR);
  }

  /** The name servers' addresses: the external addresses of the services that select this server (a
   * headless one's endpoints with `headless`); this server's own addresses when none selects it. */
  #nsRecords(name: string): RR[] {
    const own = this.#cluster.localServices();
    const ips =
      own.length === 0
        ? this.#cluster.localIPs
        : own.flatMap((svc) =>
            this.#options.headless && svc.headless
              ? this.#cluster.endpoints(svc).flatMap((g) => g.endpoints.map((e) => e.ip))
              : (svc.external ?? []).filter((h) => !h.endsWith(".")),
          );
    return addressRecords(name, ips, this.#options.ttl);
  }

  /** What SERVICE.NS, ENDPOINT.SERVICE.NS or _PORT._PROTO.SERVICE.NS publishes; undefined when the
   * name does not exist. NS alone, and _PROTO.SERVICE.NS when a port uses PROTO, exist with nothing. */
  #lookup(labels: string[], spelled: string): Entry[] | undefined {
    const n = labels.length;
    const ns = labels[n - 1];
    if (!this.#cluster.namespaceExposed(ns) || n > 4) return undefined;
    if (n === 1) return [];
    const svc = this.#cluster.service(ns, labels[n - 2]);
    if (svc === undefined || svc.externalName !== undefined) return undefined;
    const rel = `${svc.name}.${svc.ns}`;
    const target = (label?: string) => join(label === undefined ? rel : `${label}.${rel}`, spelled);
    const external = svc.external ?? [];
    const endpoints = this.#options.headless && svc.headless && external.length === 0;
    let entries: Entry[];
    if (endpoints) {
      entries = this.#cluster
        .endpoints(svc)
        .flatMap((g) => g.endpoints.map((e) => ({ target: target(e.name), host: e.ip, ports: g.ports })));
    } else entries = external.map((host) => ({ target: target(), host, ports: svc.ports }));
    if (entries.length === 0) return undefined;
    if (n === 2) return entries;
    const first = labels[0];
    if (n === 3 && first.startsWith("_")) {
      const proto = first.slice(1);
      return entries.some((e) => e.ports.some((p) => p.name !== "" && p.proto === proto)) ? [] : undefined;
    }
    if (n === 3) {
      if (!endpoints) return undefined;
      const own = entries.filter((e) => e.target === target(first));
      return own.length > 0 ? own : undefined;
    }
    const [port, proto] = [first, labels[1]];
    if (!port.startsWith("_") || !proto.startsWith("_")) return undefined;
    const matching = entries
      .map((e) => ({
        ...e,
        ports: e.ports.filter((p) => p.name === port.slice(1) && p.proto === proto.slice(1)),
      }))
      .filter((e) => e.ports.length > 0);
    return matching.length > 0 ? matching : undefined;
  }

  /** PTR of an external address, to its services' names in the first forward zone. */
  #reverse(zone: string, qname: string, qtype: number): Answer {
    const ip = addressFromReverse(qname);
    const services: Service[] = ip === undefined ? [] : this.#cluster.externalServices(ip);
    if (services.length === 0) return this.#negative(zone, Rcode.NXDOMAIN);
    if (qtype !== Type.PTR) return this.#negative(zone, Rcode.NOERROR);
    return positive(
      services.map((s) =>
        this.#rr(qname, { type: Type.PTR, target: join(`${s.name}.${s.ns}`, this.#zones.primary) }),
      ),
    );
  }

  #negative(zone: string, rcode: number): Answer {
    return { rcode, answer: [], authority: [this.soa(zone)], additional: [] };
  }

  #rr(name: string, data: RR["data"]): RR {
    return { name, type: data.type, class: Class.IN, ttl: this.#options.ttl, data } as RR;
  }
}

function positive(answer: RR[], additional: RR[] = []): Answer {
  return { rcode: Rcode.NOERROR, answer, authority: [], additional };
}
