// Signs one zone offline (RFC 4035 2): the keys' DNSKEYs at the apex, an NSEC at every authoritative
// name in canonical order (the last pointing back to the apex), and an RRSIG by every key over every
// authoritative RRset. Names below a delegation (glue) are neither in the chain nor signed, and a
// delegation's NS records are not signed (its DS and NSEC are).

import type { RR } from "../../dns/message.ts";
import { Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { rrToText } from "../../dns/text.ts";
import { DNSSEC_TYPES, dnssecRdataToText } from "../../dnssec/text.ts";
import { canonicalRRset, nsecRdata } from "../../dnssec/canonical.ts";
import type { SigningKey } from "../../dnssec/keys.ts";
import { DNSKEY, NSEC, RRSIG, dnskeyRecord, signCanonical, type Validity } from "../../dnssec/rrsig.ts";
import { canonicalOrder } from "../file/zone.ts";

const DS = 43;
/** DNSSEC records of the source are replaced by the ones made here. */
const REPLACED = new Set([RRSIG, NSEC, DNSKEY, 50, 51, 59, 60]);
/** CoreDNS's DNSKEY TTL. */
const DNSKEY_TTL = 3600;

export interface SignInput {
  origin: string;
  /** The zone's records as the file plugin parses them. */
  records: readonly RR[];
  keys: readonly SigningKey[];
  validity: Validity;
  /** The new SOA serial (CoreDNS: the Unix time of the signing). */
  serial: number;
}

/** The signed zone's records: owners in canonical order, the apex first. */
export function signZone(z: SignInput): RR[] {
  const byName = new Map<string, Map<number, RR[]>>();
  const add = (rr: RR) => {
    let node = byName.get(rr.name);
    if (!node) byName.set(rr.name, (node = new Map()));
    const set = node.get(rr.type);
    if (set) set.push(rr);
    else node.set(rr.type, [rr]);
  };
  let soa: RR | undefined;
  for (const rr of z.records) {
    if (REPLACED.has(rr.type)) continue;
    if (rr.type === Type.SOA) {
      soa = { ...rr, data: { ...(rr.data as object), serial: z.serial } as RR["data"] };
      add(soa);
    } else add({ ...rr });
  }
  if (!soa) throw new Error(`zone ${z.origin} has no SOA record`);
  for (const key of z.keys) add(dnskeyRecord(key, z.origin, DNSKEY_TTL));

  const cuts = [...byName.entries()]
    .filter(([name, node]) => name !== z.origin && node.has(Type.NS))
    .map(([name]) => name);
  const below = (name: string) => cuts.some((c) => name !== c && isSubdomain(name, c));
  const names = [...byName.keys()].filter((n) => !below(n)).sort(canonicalOrder);
  // RFC 9077: an NSEC's TTL is the lower of the SOA's TTL and its MINIMUM.
  const negativeTtl = Math.min(soa.ttl, (soa.data as { minimum: number }).minimum);

  const out: RR[] = [];
  names.forEach((name, i) => {
    const node = byName.get(name)!;
    const next = names[(i + 1) % names.length];
    const types = [...node.keys(), RRSIG, NSEC];
    node.set(NSEC, [
      { name, type: NSEC, class: 1, ttl: negativeTtl, data: { type: NSEC, raw: nsecRdata(next, types) } },
    ]);
    const cut = cuts.includes(name);
    for (const type of [...node.keys()].sort((a, b) => a - b)) {
      const set = node.get(type)!;
      out.push(...set);
      if (cut && type !== DS && type !== NSEC) continue;
      const ttl = set[0].ttl;
      const covered = canonicalRRset(set, ttl);
      for (const key of z.keys)
        out.push(signCanonical({ rrs: set, ttl, covered, key, signer: z.origin, validity: z.validity }));
    }
  });
  // Glue below the cuts, unsigned and outside the chain.
  for (const [name, node] of byName) if (below(name)) for (const set of node.values()) out.push(...set);
  return out;
}

/** The signed zone as a zone file: `header` lines as comments, then one record a line. */
export function zoneFileText(origin: string, records: readonly RR[], header: readonly string[]): string {
  return [...header.map((l) => `; ${l}`), `$ORIGIN ${origin}`, ...records.map(line), ""].join("\n");
}

/** One record a line; DNSSEC records in their presentation form rather than RFC 3597's. */
function line(rr: RR): string {
  if (!DNSSEC_TYPES.has(rr.type) || !("raw" in rr.data)) return rrToText(rr);
  const head = rrToText({ ...rr, data: { type: rr.type, raw: new Uint8Array() } }).replace(/\\# 0$/, "");
  return head + dnssecRdataToText(rr.type, rr.data.raw);
}
