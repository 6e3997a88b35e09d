// What dnssec does to a reply of one of its zones for a DO=1 query: every RRset of the zone gets its
// RRSIGs, and a denial gets an NSEC "black lie" (RFC 4470's minimally covering NSEC, as CoreDNS and
// others sign online): a name that does not exist is answered NOERROR with an NSEC at that name whose
// next name is \000.<name>, which covers nothing else and says the name holds only RRSIG and NSEC; a
// name that exists without the type asked gets an NSEC at the name with the types it holds. A zone
// walk learns nothing from either, and no NSEC chain of the zone needs to exist. A referral gets the
// parent's proof of the child's security (RFC 4035 3.1.4.1): its DS signed, or an NSEC at the cut
// showing NS and no DS; the NS records and the glue are the child's and stay unsigned.

import type { Msg, RR } from "../../dns/message.ts";
import { negativeTtl } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { nsecRdata } from "../../dnssec/canonical.ts";
import { DNSKEY, NSEC, RRSIG, coveredType } from "../../dnssec/rrsig.ts";
import type { SigningKey } from "../../dnssec/keys.ts";
import type { Signatures } from "./signatures.ts";

/** The keys of one dnssec directive: with KSKs and ZSKs both present (the SEP bit), DNSKEY RRsets are
 * signed by the KSKs and everything else by the ZSKs; otherwise every key signs everything (CSKs). */
export interface KeySet {
  readonly forDnskey: readonly SigningKey[];
  readonly forOthers: readonly SigningKey[];
}

export interface SignContext {
  readonly keys: KeySet;
  readonly signatures: Signatures;
  readonly server: string;
}

/** A denial's name: where the answer's CNAME chain from `qname` ends. */
export function deniedName(reply: Msg, qname: string): string {
  let name = qname;
  for (const rr of reply.answer)
    if (rr.type === Type.CNAME && rr.name === name && "target" in rr.data) name = rr.data.target;
  return name;
}

/** Whether `reply` denies `qtype` at the end of its CNAME chain (NXDOMAIN or NODATA with the SOA). */
export function isDenial(reply: Msg, qtype: number, name: string): boolean {
  if (reply.rcode === Rcode.NXDOMAIN) return true;
  if (reply.rcode !== Rcode.NOERROR || !reply.authority.some((rr) => rr.type === Type.SOA)) return false;
  return !reply.answer.some((rr) => rr.name === name && (rr.type === qtype || qtype === Type.ANY));
}

/** `rrs` cut into RRsets (adjacent or not), in the order they first appear. */
function rrsets(rrs: readonly RR[]): RR[][] {
  const sets = new Map<string, RR[]>();
  for (const rr of rrs) {
    if (rr.type === RRSIG || rr.type === Type.OPT) continue;
    const k = `${rr.name} ${rr.type} ${rr.class}`;
    const set = sets.get(k);
    if (set) set.push(rr);
    else sets.set(k, [rr]);
  }
  return [...sets.values()];
}

/** Whether `set` is `zone`'s own data: in the zone and not below its delegation point `cut`, where
 * only the DS and NSEC records are the parent's (RFC 4035 2.2). */
function isOwn(set: readonly RR[], zone: string, cut: string | undefined): boolean {
  const { name, type } = set[0];
  if (!isSubdomain(name, zone)) return false;
  if (cut === undefined || !isSubdomain(name, cut)) return true;
  return name === cut && (type === Type.DS || type === NSEC);
}

/** The section with each RRset of `zone` followed by its RRSIGs (a new array; `rrs` is not touched);
 * nothing at or below the delegation point `cut` is signed but its DS and NSEC. */
function signSection(rrs: readonly RR[], zone: string, c: SignContext, cut?: string): RR[] {
  const out: RR[] = [];
  for (const set of rrsets(rrs)) {
    out.push(...set);
    if (!isOwn(set, zone, cut)) continue;
    const keys = set[0].type === DNSKEY ? c.keys.forDnskey : c.keys.forOthers;
    out.push(...c.signatures.of(set, keys, zone, c.server));
  }
  return out;
}

/** Signs a positive reply's records of `zone`, in place (new section arrays); with a delegation point
 * `cut`, nothing at or below it but its DS and NSEC. */
export function signSections(reply: Msg, zone: string, c: SignContext, cut?: string): void {
  reply.answer = signSection(reply.answer, zone, c, cut);
  reply.authority = signSection(reply.authority, zone, c, cut);
  reply.additional = signSection(reply.additional, zone, c, cut);
}

/** The delegation point a NOERROR reply of `zone` refers to: the owner of the NS records of its
 * authority section below the apex (a referral, or a CNAME chain of the zone that ends in one). */
export function cutOf(reply: Msg, zone: string): string | undefined {
  if (reply.rcode !== Rcode.NOERROR) return undefined;
  for (const rr of reply.authority)
    if (rr.type === Type.NS && rr.name !== zone && isSubdomain(rr.name, zone)) return rr.name;
  return undefined;
}

/** Signs a reply that refers to the child at `cut`, in place: its DS RRset signed, or, when the cut
 * has none, the NSEC that proves so (RFC 4035 3.1.4.1), at the cut with NS in its bit map, and
 * signed. The NSEC's TTL is the NS RRset's, as CoreDNS gives it (a referral holds no SOA). */
export function signReferral(reply: Msg, zone: string, cut: string, c: SignContext): void {
  const atCut = reply.authority.filter((rr) => rr.name === cut);
  if (!atCut.some((rr) => rr.type === Type.DS || rr.type === NSEC)) {
    const ttl = atCut.find((rr) => rr.type === Type.NS)!.ttl;
    reply.authority.push(blackLie(cut, [Type.NS, RRSIG, NSEC], ttl));
  }
  signSections(reply, zone, c, cut);
}

/** The minimally covering NSEC at `name`: its next name `\000.<name>` is the first name after it in
 * canonical order, so the record covers no other name. */
function blackLie(name: string, types: Iterable<number>, ttl: number): RR {
  const next = name === "." ? "\\000." : `\\000.${name}`;
  return { name, type: NSEC, class: 1, ttl, data: { type: NSEC, raw: nsecRdata(next, types) } };
}

export interface Denial {
  /** The name denied (deniedName). */
  name: string;
  /** The types the name holds for a NODATA; undefined for a name that does not exist. */
  types: readonly number[] | undefined;
}

/** Turns a denial of `zone` into its signed black lie, in place: the SOA signed, the NSEC and its
 * RRSIG added, NXDOMAIN made NOERROR. */
export function signDenial(reply: Msg, zone: string, d: Denial, c: SignContext): void {
  const soa = reply.authority.find((rr) => rr.type === Type.SOA);
  const ttl = negativeTtl(reply.authority) ?? soa?.ttl ?? 0;
  const types = new Set([RRSIG, NSEC, ...(d.types ?? [])]);
  if (d.types !== undefined && d.name === zone) types.add(DNSKEY);
  const nsec = blackLie(d.name, types, ttl);
  reply.answer = signSection(reply.answer, zone, c);
  reply.authority = [
    ...signSection(reply.authority, zone, c),
    nsec,
    ...c.signatures.of([nsec], c.keys.forOthers, zone, c.server),
  ];
  reply.additional = signSection(reply.additional, zone, c);
  reply.rcode = Rcode.NOERROR;
}

/** A signed denial of an NSEC question made its answer: the NSEC and its RRSIG move to the answer
 * section, and the SOA, which only a denial carries, goes. */
export function nsecAsAnswer(reply: Msg): void {
  const nsec = (rr: RR) => rr.type === NSEC || (rr.type === RRSIG && coveredType(rr) === NSEC);
  reply.answer = [...reply.answer, ...reply.authority.filter(nsec)];
  reply.authority = [];
}
