// The records of one query, built from the services etcd holds for the name, with CoreDNS's rules
// (its plugin/backend_lookup.go): CNAMEs chased inside the zone by reading etcd again and outside it
// through the server itself, SRV weights shared out per priority, targets' addresses as extras.

import type { Msg, RR, RData } from "../../dns/message.ts";
import type { Records } from "./records.ts";
import type { Service } from "./service.ts";
import { NameNotFound } from "./records.ts";
import { absolute, hostKind, nameOf, stripTarget } from "./service.ts";
import { Class, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";

/** Longest chain of CNAMEs followed inside the zone, as in CoreDNS. */
const MAX_CHAIN = 10;

export interface Section {
  answer: RR[];
  extra: RR[];
}

export interface AnswerOptions {
  records: Records;
  /** The zone of the plugin the name is in. */
  zone: string;
  /** Date.now() past which the query is abandoned (`cancel`); Infinity without. */
  deadline: number;
  /** Resolves a name outside the zone through the server (SetupContext.lookup). */
  lookup: (name: string, qtype: number) => Promise<Msg>;
}

/** A or AAAA rdata, as the kind of the host says. */
function addressData(kind: "A" | "AAAA", address: string): RData {
  return kind === "A" ? { type: Type.A, address } : { type: Type.AAAA, address };
}

function rr(name: string, ttl: number, data: RData): RR {
  return { name, type: data.type, class: Class.IN, ttl, data };
}

export class Answer {
  readonly #o: AnswerOptions;

  constructor(o: AnswerOptions) {
    this.#o = o;
  }

  #services(name: string, exact: boolean, qtype: number): Promise<Service[]> {
    return this.#o.records.services(name, exact, qtype, this.#o.deadline);
  }

  /** A or AAAA records of `name`; at the apex, those of apex.dns.<zone> when it exists. */
  async addresses(name: string, qtype: number, chain: RR[] = []): Promise<RR[]> {
    const out: RR[] = [];
    const seen = new Set<string>();
    for (const s of await this.#apexOr(name, qtype)) {
      const h = hostKind(s);
      if (h.kind === "CNAME") {
        out.push(...(await this.#chase(name, s, qtype, chain, (n, c) => this.addresses(n, qtype, c))));
      } else if ((h.kind === "A" && qtype === Type.A) || (h.kind === "AAAA" && qtype === Type.AAAA)) {
        if (seen.has(s.host)) continue;
        seen.add(s.host);
        out.push(rr(name, s.ttl, addressData(h.kind, h.address)));
      }
    }
    return out;
  }

  async txt(name: string, chain: RR[] = []): Promise<RR[]> {
    const out: RR[] = [];
    const seen = new Set<string>();
    for (const s of await this.#services(name, false, Type.TXT)) {
      const h = hostKind(s);
      if (h.kind === "CNAME") {
        out.push(...(await this.#chase(name, s, Type.TXT, chain, (n, c) => this.txt(n, c))));
      } else if (h.kind === "TXT" && !seen.has(s.text)) {
        seen.add(s.text);
        out.push(rr(name, s.ttl, { type: Type.TXT, strings: split255(s.text) }));
      }
    }
    return out;
  }

  /** A CNAME to the service's host, followed by what the target has of `qtype`: read from etcd when
   * the target is in the zone (nothing when that yields no records), else asked of the server. */
  async #chase(
    name: string,
    s: Service,
    qtype: number,
    chain: RR[],
    again: (target: string, chain: RR[]) => Promise<RR[]>,
  ): Promise<RR[]> {
    const target = absolute(s.host);
    if (target === name || chain.length > MAX_CHAIN) return [];
    if (chain.some((c) => c.name === name && "target" in c.data && c.data.target === target)) return [];
    const cname = rr(name, s.ttl, { type: Type.CNAME, target });
    if (isSubdomain(target, this.#o.zone)) {
      const next = await again(target, [...chain, cname]).catch(() => []);
      return next.length > 0 ? [cname, ...next] : [];
    }
    const m = await this.#o.lookup(target, qtype).catch(() => undefined);
    return m ? [cname, ...m.answer] : [];
  }

  async #apexOr(name: string, qtype: number): Promise<Service[]> {
    const { zone } = this.#o;
    if (name !== zone) return this.#services(name, false, qtype);
    try {
      return await this.#services(`apex.dns.${zone === "." ? "" : zone}`, false, qtype);
    } catch (err) {
      if (!(err instanceof NameNotFound)) throw err;
      return this.#services(name, false, qtype);
    }
  }

  /** SRV records; a target that is an address gets the key's name, and its address as an extra. */
  async srv(name: string): Promise<Section> {
    const services = await this.#services(name, false, Type.SRV);
    // Each priority's weights shared out of 100; a record without a weight counts as 100.
    const total = new Map<number, number>();
    for (const s of services) total.set(s.priority, (total.get(s.priority) ?? 0) + (s.weight || 100));
    const out: Section = { answer: [], extra: [] };
    const seen = new Set<string>();
    for (const s of services) {
      if (s.port === -1) continue;
      const weight = Math.max(1, Math.floor((100 / total.get(s.priority)!) * (s.weight || 100)));
      await this.#target(s, out, seen, (target) =>
        rr(name, s.ttl, {
          type: Type.SRV,
          priority: s.priority & 0xffff,
          weight,
          port: s.port & 0xffff,
          target,
        }),
      );
    }
    return out;
  }

  /** MX records from the services marked `mail`, their priority as preference. */
  async mx(name: string): Promise<Section> {
    const out: Section = { answer: [], extra: [] };
    const seen = new Set<string>();
    for (const s of await this.#services(name, false, Type.MX)) {
      if (!s.mail) continue;
      await this.#target(s, out, seen, (exchange) =>
        rr(name, s.ttl, { type: Type.MX, preference: s.priority & 0xffff, exchange }),
      );
    }
    return out;
  }

  /** Adds the record `make` builds for the service's target, and the target's addresses as extras. */
  async #target(s: Service, out: Section, seen: Set<string>, make: (target: string) => RR): Promise<void> {
    const h = hostKind(s);
    if (h.kind === "CNAME") {
      const target = stripTarget(absolute(s.host), s.targetstrip);
      out.answer.push(make(target));
      if (seen.has(target)) return;
      seen.add(target);
      out.extra.push(...(await this.#addressesOf(target)));
    } else if (h.kind === "A" || h.kind === "AAAA") {
      const target = stripTarget(nameOf(s.key), s.targetstrip);
      const record = make(target);
      // One record per target and port (SRV) or preference (MX), as CoreDNS dedupes them.
      const d = record.data;
      const id = `${target} ${"port" in d ? d.port : "preference" in d ? d.preference : 0}`;
      if (!seen.has(id)) out.answer.push(record);
      seen.add(id);
      if (seen.has(`${target} ${h.address}`)) return;
      seen.add(`${target} ${h.address}`);
      out.extra.push(rr(target, s.ttl, addressData(h.kind, h.address)));
    }
  }

  /** The addresses of an SRV or MX target: A from etcd inside the zone, A and AAAA outside. */
  async #addressesOf(target: string): Promise<RR[]> {
    if (isSubdomain(target, this.#o.zone)) return this.addresses(target, Type.A).catch(() => []);
    const out: RR[] = [];
    for (const t of [Type.A, Type.AAAA]) {
      const m = await this.#o.lookup(target, t).catch(() => undefined);
      if (m) out.push(...m.answer.filter((r) => t === Type.A || r.type !== Type.CNAME));
    }
    return out;
  }

  /** The name's own key only: its host as CNAME target when it is a name. */
  async cname(name: string): Promise<RR[]> {
    const [s] = await this.#services(name, true, Type.CNAME);
    return s && hostKind(s).kind !== "A" && hostKind(s).kind !== "AAAA"
      ? [rr(name, s.ttl, { type: Type.CNAME, target: absolute(s.host) })]
      : [];
  }

  /** The name's own key only: PTR to every host that is a name. */
  async ptr(name: string): Promise<RR[]> {
    const out: RR[] = [];
    const seen = new Set<string>();
    for (const s of await this.#services(name, true, Type.PTR)) {
      const k = hostKind(s).kind;
      if (k === "A" || k === "AAAA" || seen.has(s.host)) continue;
      seen.add(s.host);
      out.push(rr(name, s.ttl, { type: Type.PTR, target: absolute(s.host) }));
    }
    return out;
  }

  /** NS at the apex: the services under ns.dns.<zone>, each an address, named after its key. */
  async ns(): Promise<Section> {
    const zone = this.#o.zone;
    const out: Section = { answer: [], extra: [] };
    const seen = new Set<string>();
    for (const s of await this.#services(`ns.dns.${zone === "." ? "" : zone}`, false, Type.NS)) {
      const h = hostKind(s);
      if (h.kind !== "A" && h.kind !== "AAAA") throw new Error(`NS record must be an IP address: ${s.host}`);
      const target = stripTarget(nameOf(s.key), s.targetstrip);
      out.extra.push(rr(target, s.ttl, addressData(h.kind, h.address)));
      if (seen.has(target)) continue;
      seen.add(target);
      out.answer.push(rr(zone, s.ttl, { type: Type.NS, target }));
    }
    return out;
  }
}

/** Text in strings of 255 characters at most, as a TXT record holds it. */
function split255(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 255) out.push(text.slice(i, i + 255));
  return out.length === 0 ? [""] : out;
}
