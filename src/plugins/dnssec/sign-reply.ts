// What dnssec does to a reply of one of its zones for a DO=1 query: every RRset of the zone gets its
// RRSIGs, and a denial gets an NSEC "black lie" (RFC 4470's minimally covering NSEC, as CoreDNS and
// others sign online): a name that does not exist is answered NOERROR with an NSEC at that name whose
// next name is \000.<name>, which covers nothing else and says the name holds only RRSIG and NSEC; a
// name that exists without the type asked gets an NSEC at the name with the types it holds. A zone
// walk learns nothing from either, and no NSEC chain of the zone needs to exist.

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

/** The section with each RRset of `zone` followed by its RRSIGs (a new array; `rrs` is not touched). */
function signSection(rrs: readonly RR[], zone: string, c: SignContext): RR[] {
  const out: RR[] = [];
  for (const set of rrsets(rrs)) {
    out.push(...set);
    if (!isSubdomain(set[0].name, zone)) continue;
    const keys = set[0].type === DNSKEY ? c.keys.forDnskey : c.keys.forOthers;
    out.push(...c.signatures.of(set, keys, zone, c.server));
  }
  return out;
}

/** Signs a positive reply or a referral's records of `zone`, in place (new section arrays). */
export function signSections(reply: Msg, zone: string, c: SignContext): void {
  reply.answer = signSection(reply.answer, zone, c);
  reply.authority = signSection(reply.authority, zone, c);
  reply.additional = signSection(reply.additional, zone, c);
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
  const nsec: RR = {
    name: d.name,
    type: NSEC,
    class: 1,
    ttl,
    data: { type: NSEC, raw: nsecRdata(d.name === "." ? "\\000." : `\\000.${d.name}`, types) },
  };
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
