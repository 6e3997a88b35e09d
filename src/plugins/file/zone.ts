// One authoritative zone in memory and its lookup algorithm (RFC 1034 4.3.2, wildcards per RFC 4592,
// negative answers per RFC 2308). Records are indexed by owner name, so a lookup costs O(labels).

import type { RR } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { canonical, isSubdomain, parent } from "../../dns/name.ts";
import { DNSKEY, NSEC, RRSIG, coveredType } from "../../dnssec/rrsig.ts";

/** How a lookup ended, for tests and logs. */
export type LookupKind = "answer" | "nodata" | "nxdomain" | "referral" | "outside";

export interface Lookup {
  kind: LookupKind;
  rcode: number;
  /** AA bit: false for referrals (the data below a cut is not ours) and for names outside the zone. */
  authoritative: boolean;
  answer: RR[];
  authority: RR[];
  additional: RR[];
}

/** Most CNAMEs one answer holds: longer chains are cut there. */
const MAX_CHAIN = 8;

/** RRsets at one owner name; empty for an empty non-terminal. */
type Node = Map<number, RR[]>;

export class Zone {
  readonly origin: string;
  readonly soa: RR;
  /** The SOA's serial. */
  get serial(): number {
    return (this.soa.data as { serial: number }).serial;
  }
  /** Number of records. */
  readonly size: number;
  /** Owner -> RRsets, every name between an owner and the apex included (empty non-terminals). */
  readonly #nodes = new Map<string, Node>();
  /** Delegation points: names below the apex that hold NS records. */
  readonly #cuts = new Set<string>();
  /** The SOA as negative answers carry it: TTL min(SOA TTL, SOA minimum) (RFC 2308 3). */
  readonly #negativeSoa: RR;
  /** The owners of the zone's NSEC records in canonical order, made on the first signed lookup. */
  #chain: string[] | undefined;
  /** The zone holds DNSSEC records (a signed zone file): DO=1 answers carry them. */
  readonly signed: boolean;

  /** `records` must be one valid zone, as parseZone returns it. The zone keeps frozen copies; answers
   * get fresh RR objects whose `data` is shared and frozen. */
  constructor(origin: string, records: readonly RR[]) {
    this.origin = canonical(origin);
    this.#nodes.set(this.origin, new Map());
    let soa: RR | undefined;
    for (const input of records) {
      const rr: RR = Object.freeze({
        ...input,
        name: input.name.toLowerCase(),
        data: Object.freeze({ ...input.data }),
      });
      if (!isSubdomain(rr.name, this.origin))
        throw new Error(`${rr.name} is outside the zone ${this.origin}`);
      if (rr.type === Type.SOA && rr.name === this.origin) soa = rr;
      if (rr.type === Type.NS && rr.name !== this.origin) this.#cuts.add(rr.name);
      const node = this.#node(rr.name);
      const set = node.get(rr.type);
      if (set) set.push(rr);
      else node.set(rr.type, [rr]);
    }
    if (!soa) throw new Error(`zone ${this.origin} has no SOA record`);
    this.soa = soa;
    this.size = records.length;
    const apex = this.#nodes.get(this.origin)!;
    this.signed = apex.has(DNSKEY) && apex.has(RRSIG);
    const minimum = (soa.data as { minimum: number }).minimum;
    this.#negativeSoa = Object.freeze({ ...soa, ttl: Math.min(soa.ttl, minimum) });
  }

  /** Every record but the apex SOA, for a zone transfer: one owner name per array, the apex first and
   * the rest in canonical order (RFC 4034 6.1), types ascending. The zone never changes (a reload
   * makes a new one), so a transfer under way sends one version whole. */
  *transferRecords(): Generator<readonly RR[]> {
    const names = [...this.#nodes.keys()].filter((n) => n !== this.origin).sort(canonicalOrder);
    for (const name of [this.origin, ...names]) {
      const node = this.#nodes.get(name)!;
      const out: RR[] = [];
      for (const type of [...node.keys()].sort((a, b) => a - b)) {
        for (const rr of node.get(type)!) if (rr !== this.soa) out.push(rr);
      }
      if (out.length > 0) yield out;
    }
  }

  /** The node for `name`, created along with the empty non-terminals above it. */
  #node(name: string): Node {
    let node = this.#nodes.get(name);
    if (node) return node;
    node = new Map();
    this.#nodes.set(name, node);
    for (let n = parent(name); n !== this.origin && !this.#nodes.has(n); n = parent(n))
      this.#nodes.set(n, new Map());
    return node;
  }

  /** Answers `qname`/`qtype` from this zone. `qname` is canonical; case does not matter. */
  lookup(qname: string, qtype: number): Lookup {
    let name = qname.toLowerCase();
    if (!isSubdomain(name, this.origin)) {
      return {
        kind: "outside",
        rcode: Rcode.REFUSED,
        authoritative: false,
        answer: [],
        authority: [],
        additional: [],
      };
    }
    const answer: RR[] = [];
    const visited = new Set<string>();
    for (let hops = 0; ; hops++) {
      const cut = this.#cutAt(name, qtype);
      if (cut !== undefined) {
        const ns = this.#copy(this.#nodes.get(cut)!.get(Type.NS)!, undefined);
        const additional = this.#glue(ns);
        // A CNAME chain that runs into a delegation ends with its referral (RFC 1034 4.3.2 step 3b), as
        // Knot and CoreDNS answer: the resolver goes on at the child without asking for the cut again.
        if (answer.length > 0) {
          return {
            kind: "answer",
            rcode: Rcode.NOERROR,
            authoritative: true,
            answer,
            authority: ns,
            additional,
          };
        }
        return {
          kind: "referral",
          rcode: Rcode.NOERROR,
          authoritative: false,
          answer: [],
          authority: ns,
          additional,
        };
      }
      // An existing name is its own data; otherwise the wildcard at the closest encloser stands in.
      const exact = this.#nodes.get(name);
      const node = exact ?? this.#wildcard(name);
      if (!node) return this.#negative("nxdomain", answer);
      const owner = exact ? undefined : name;
      if (qtype === Type.ANY) {
        for (const set of node.values()) answer.push(...this.#copy(set, owner));
        return answer.length > 0 ? this.#positive(answer) : this.#negative("nodata", answer);
      }
      const set = node.get(qtype);
      if (set) {
        answer.push(...this.#copy(set, owner));
        return this.#positive(answer);
      }
      const cname = qtype === Type.CNAME ? undefined : node.get(Type.CNAME);
      if (!cname) return this.#negative("nodata", answer);
      // A chain longer than MAX_CHAIN links is handed back as far as it got; the resolver goes on.
      if (hops === MAX_CHAIN) return this.#positive(answer);
      answer.push(...this.#copy(cname, owner));
      visited.add(name);
      const target = (cname[0].data as { target: string }).target;
      // Chase inside the zone only, and stop at a loop.
      if (!isSubdomain(target, this.origin) || visited.has(target)) return this.#positive(answer);
      name = target;
    }
  }

  /** The topmost delegation point at or above `name` (below the apex), if any. The DS RRset at a cut
   * is the parent's (RFC 4035 3.1.4.1): a DS question for the cut itself is answered, not referred. */
  #cutAt(name: string, qtype: number): string | undefined {
    if (this.#cuts.size === 0) return undefined;
    let cut: string | undefined;
    for (let n = name; n !== this.origin; n = parent(n)) if (this.#cuts.has(n)) cut = n;
    return cut === name && qtype === Type.DS ? undefined : cut;
  }

  /** The node of `*.<closest encloser>` for a name that does not exist, if there is one (RFC 4592 3.3). */
  #wildcard(name: string): Node | undefined {
    let encloser = parent(name);
    while (!this.#nodes.has(encloser)) encloser = parent(encloser);
    return this.#nodes.get("*." + encloser);
  }

  /** Answer RRs: fresh objects (callers may reorder or rename them), owner rewritten for wildcards. */
  #copy(set: readonly RR[], owner: string | undefined): RR[] {
    return set.map((rr) => (owner === undefined ? { ...rr } : { ...rr, name: owner }));
  }

  #positive(answer: RR[]): Lookup {
    const additional = this.#additional(answer);
    return { kind: "answer", rcode: Rcode.NOERROR, authoritative: true, answer, authority: [], additional };
  }

  #negative(kind: "nodata" | "nxdomain", answer: RR[]): Lookup {
    const rcode = kind === "nxdomain" ? Rcode.NXDOMAIN : Rcode.NOERROR;
    const authority = [{ ...this.#negativeSoa }];
    return { kind, rcode, authoritative: true, answer, authority, additional: [] };
  }

  /** A and AAAA records from the zone for the names that MX, SRV and NS records in `answer` point at. */
  #additional(answer: readonly RR[]): RR[] {
    const targets: string[] = [];
    for (const rr of answer) {
      const d = rr.data as { exchange?: string; target?: string };
      if (rr.type === Type.MX) targets.push(d.exchange!);
      else if (rr.type === Type.SRV || rr.type === Type.NS) targets.push(d.target!);
    }
    return this.#addresses(targets);
  }

  /** Glue: addresses of the name servers of a referral, wherever in the zone they are. */
  #glue(ns: readonly RR[]): RR[] {
    return this.#addresses(ns.map((rr) => (rr.data as { target: string }).target));
  }

  /** For a DO=1 referral of a zone that is not signed: the DS RRset at the cut after the NS records, as
   * CoreDNS's file adds it, for `dnssec` to sign (or to prove absent, when the cut has none). */
  addDelegationDs(found: Lookup): void {
    if (found.kind !== "referral") return;
    const ds = this.#nodes.get(found.authority[0].name)!.get(Type.DS);
    if (ds) found.authority.push(...this.#copy(ds, undefined));
  }

  /** For a DO=1 query: adds to `found` (a lookup of `qname` in this zone, which is signed) the RRSIGs
   * of its RRsets and the NSEC records, signed, that prove a denial or a wildcard's expansion (RFC
   * 4035 3.1.1-3.1.3). */
  addProof(found: Lookup, qname: string): void {
    const name = qname.toLowerCase();
    const proofs: RR[][] = [];
    if (found.kind === "answer") {
      // A wildcard's expansion: the NSEC that shows the name itself does not exist (3.1.3.3).
      const expanded = found.answer.find((rr) => !this.#nodes.has(rr.name));
      if (expanded) proofs.push(this.#covering(expanded.name));
    } else if (found.kind === "referral") {
      const cut = found.authority[0].name;
      const ds = this.#nodes.get(cut)!.get(Type.DS);
      proofs.push(ds ? this.#copy(ds, undefined) : this.#nsecAt(cut)); // 3.1.4
    } else if (found.kind !== "outside") {
      // The denial is for the last name of the CNAME chain, if there is one.
      const last = found.answer.at(-1);
      const target = last?.type === Type.CNAME ? (last.data as { target: string }).target : name;
      const exact = this.#nodes.get(target);
      if (found.kind === "nodata" && exact?.has(NSEC)) proofs.push(this.#nsecAt(target));
      else {
        // NXDOMAIN, an empty non-terminal or a wildcard's NODATA: the NSEC that covers the name, and
        // the one that covers (or is) the wildcard at the closest encloser (3.1.3.2).
        proofs.push(this.#covering(target));
        let encloser = parent(target);
        while (!this.#nodes.has(encloser)) encloser = parent(encloser);
        const wild = "*." + encloser;
        proofs.push(this.#nodes.get(wild)?.has(NSEC) ? this.#nsecAt(wild) : this.#covering(wild));
      }
    }
    found.answer = this.#withSignatures(found.answer);
    const seen = new Set(found.authority.map((rr) => `${rr.name} ${rr.type}`));
    const added: RR[] = [];
    for (const rrs of proofs) {
      if (rrs.length === 0 || seen.has(`${rrs[0].name} ${rrs[0].type}`)) continue;
      seen.add(`${rrs[0].name} ${rrs[0].type}`);
      added.push(...rrs);
    }
    // A referral's NS records are the child's, never signed here.
    found.authority =
      found.kind === "referral"
        ? [...found.authority, ...this.#withSignatures(added)]
        : this.#withSignatures([...found.authority, ...added]);
  }

  /** `rrs` with the RRSIGs of each RRset after it. */
  #withSignatures(rrs: readonly RR[]): RR[] {
    const out: RR[] = [];
    for (let i = 0; i < rrs.length;) {
      let j = i;
      while (j < rrs.length && rrs[j].name === rrs[i].name && rrs[j].type === rrs[i].type) j++;
      out.push(...rrs.slice(i, j), ...this.#signaturesOf(rrs.slice(i, j)));
      i = j;
    }
    return out;
  }

  /** The RRSIGs of one RRset (the wildcard's, renamed, for an expansion), with the RRset's TTL. */
  #signaturesOf(set: readonly RR[]): RR[] {
    if (set.length === 0 || set[0].type === RRSIG) return [];
    const { name, type, ttl } = set[0];
    const node = this.#nodes.get(name) ?? this.#wildcard(name);
    const sigs = (node?.get(RRSIG) ?? []).filter((rr) => coveredType(rr) === type);
    return sigs.map((rr) => ({ ...rr, name, ttl: Math.min(rr.ttl, ttl) }));
  }

  #nsecAt(name: string): RR[] {
    return this.#copy(this.#nodes.get(name)?.get(NSEC) ?? [], undefined);
  }

  /** The NSEC whose owner is the last one at or before `name` in canonical order (the chain wraps). */
  #covering(name: string): RR[] {
    this.#chain ??= [...this.#nodes.entries()]
      .filter(([, node]) => node.has(NSEC))
      .map(([owner]) => owner)
      .sort(canonicalOrder);
    const chain = this.#chain;
    if (chain.length === 0) return [];
    let lo = 0;
    let hi = chain.length - 1;
    let at = chain.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (canonicalOrder(chain[mid], name) <= 0) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (canonicalOrder(chain[0], name) > 0) at = chain.length - 1;
    return this.#nsecAt(chain[at]);
  }

  #addresses(names: readonly string[]): RR[] {
    const out: RR[] = [];
    const done = new Set<string>();
    for (const name of names) {
      if (done.has(name)) continue;
      done.add(name);
      const node = this.#nodes.get(name);
      if (!node) continue;
      out.push(
        ...this.#copy(node.get(Type.A) ?? [], undefined),
        ...this.#copy(node.get(Type.AAAA) ?? [], undefined),
      );
    }
    return out;
  }
}

/** RFC 4034 6.1: names compared label by label from the right, each label as lowercase octets. */
export function canonicalOrder(a: string, b: string): number {
  const x = a.slice(0, -1).split(".").reverse();
  const y = b.slice(0, -1).split(".").reverse();
  for (let i = 0; i < x.length && i < y.length; i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}
