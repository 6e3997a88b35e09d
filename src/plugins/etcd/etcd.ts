// etcd: answers SkyDNS records read from etcd, once per query as CoreDNS does (no copy of etcd's data
// is kept, so a change in etcd is seen by the next query). Replies are never kept by the answer store;
// `cache` may keep them by its own rules, as in CoreDNS.

import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import type { Records } from "./records.ts";
import type { Section } from "./answer.ts";
import { Answer } from "./answer.ts";
import { NameNotFound } from "./records.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";

/** As CoreDNS: the SOA's minimum and the cap on its TTL. */
const SOA_MIN_TTL = 30;

export interface EtcdOptions {
  zones: string[];
  /** Zones `fallthrough` covers ("." for all); undefined without fallthrough. */
  fallthrough: string[] | undefined;
  records: Records;
  /** SetupContext.lookup: CNAME, SRV and MX targets outside the zone. */
  lookup: (name: string, qtype: number, depth?: number) => Promise<Msg>;
  log: Logger;
}

export class Etcd {
  readonly #o: EtcdOptions;
  /** etcd failed the last query: the next failure is not logged again, the next success is. */
  #down = false;

  constructor(o: EtcdOptions) {
    this.#o = o;
  }

  handler(next: Handler): Handler {
    return {
      name: "etcd",
      serve: async (req) => (await this.answer(req)) ?? next.serve(req),
    };
  }

  /** The reply, or undefined to pass the query on (outside the zones, or fallthrough). */
  async answer(req: Request): Promise<Msg | undefined> {
    const { qname, qtype } = req;
    if (req.qclass !== Class.IN) return undefined;
    const zone = this.#zoneOf(qname);
    if (zone === undefined) return undefined;
    const depth = (req.depth ?? 0) + 1;
    const a = new Answer({
      records: this.#o.records,
      zone,
      deadline: req.deadline ?? Infinity,
      lookup: (name, t) => this.#o.lookup(name, t, depth),
    });
    let found: Section;
    try {
      found = await this.#ask(a, qname, qtype, zone);
      if (this.#down) this.#o.log.info("etcd answers again");
      this.#down = false;
    } catch (err) {
      if (err instanceof NameNotFound) {
        if (this.#falls(qname)) return undefined;
        return this.#reply(req, zone, Rcode.NXDOMAIN, { answer: [], extra: [] });
      }
      if (!this.#down) this.#o.log.error({ err }, `etcd: ${(err as Error).message}; answering SERVFAIL`);
      this.#down = true;
      return this.#reply(req, zone, Rcode.SERVFAIL, { answer: [], extra: [] });
    }
    return this.#reply(req, zone, Rcode.NOERROR, found);
  }

  async #ask(a: Answer, qname: string, qtype: number, zone: string): Promise<Section> {
    const only = (answer: RR[]): Section => ({ answer, extra: [] });
    switch (qtype) {
      case Type.A:
      case Type.AAAA:
        return only(await a.addresses(qname, qtype));
      case Type.TXT:
        return only(await a.txt(qname));
      case Type.CNAME:
        return only(await a.cname(qname));
      case Type.PTR:
        return only(await a.ptr(qname));
      case Type.MX:
        return a.mx(qname);
      case Type.SRV:
        return a.srv(qname);
      case Type.SOA:
        return only([this.#soa(zone)]);
      case Type.NS:
        if (qname === zone) return a.ns();
        return this.#exists(a, qname);
      default:
        return this.#exists(a, qname);
    }
  }

  /** No records of this type: whether the name exists (NODATA) or not (NXDOMAIN throws). */
  async #exists(a: Answer, qname: string): Promise<Section> {
    await a.addresses(qname, Type.A);
    return { answer: [], extra: [] };
  }

  #reply(req: Request, zone: string, rcode: number, s: Section): Msg {
    const m = replyTo(req.msg, rcode);
    m.aa = true;
    m.answer = s.answer;
    m.additional = s.extra;
    if (s.answer.length === 0) m.authority = [this.#soa(zone)];
    req.answeredBy = "etcd";
    // Read per query: the answer store never replays it (cache, when present, keeps it by its rules).
    req.cache.limit(0);
    return m;
  }

  #soa(zone: string): RR {
    const apex = zone === "." ? "" : zone;
    return {
      name: zone,
      type: Type.SOA,
      class: Class.IN,
      ttl: SOA_MIN_TTL,
      data: {
        type: Type.SOA,
        mname: `ns.dns.${apex}`,
        rname: `hostmaster.${apex}`,
        serial: Math.floor(Date.now() / 1000) >>> 0,
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: SOA_MIN_TTL,
      },
    };
  }

  /** The longest of the plugin's zones that holds the name. */
  #zoneOf(qname: string): string | undefined {
    let best: string | undefined;
    for (const z of this.#o.zones)
      if (isSubdomain(qname, z) && (best === undefined || z.length > best.length)) best = z;
    return best;
  }

  #falls(qname: string): boolean {
    return this.#o.fallthrough?.some((z) => isSubdomain(qname, z)) ?? false;
  }
}
