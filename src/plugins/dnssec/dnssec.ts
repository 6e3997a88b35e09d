// dnssec: signs, on the fly, the answers of its zones to queries with the DO bit (RFC 3225), and
// answers DNSKEY at each zone's apex. Queries without DO pass through untouched (also in the wire
// lane), and so does what `forward` brought from elsewhere. The answer store keys replies by the DO
// bit (src/dns/key.ts's state octet), so a signed reply is only replayed to DO=1 clients and an
// unsigned one only to the others; `cache` in front keeps the signed reply as it keeps any other.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { AnswerPolicy } from "../../answers/policy.ts";
import { DNSKEY, NSEC, RRSIG, dnskeyRecord } from "../../dnssec/rrsig.ts";
import { SEP, type SigningKey } from "../../dnssec/keys.ts";
import {
  cutOf,
  deniedName,
  isDenial,
  nsecAsAnswer,
  signDenial,
  signReferral,
  signSections,
  type KeySet,
  type SignContext,
} from "./sign-reply.ts";
import type { Signatures } from "./signatures.ts";

/** The DNSKEY RRset's TTL (CoreDNS's too). */
export const DNSKEY_TTL = 3600;

export interface DnssecOptions {
  /** Canonical, longest first. */
  zones: readonly string[];
  keys: readonly SigningKey[];
  signatures: Signatures;
  /** Called with each query's server label, for the cache-size gauge. */
  served?: (server: string) => void;
}

/** KSKs for the DNSKEY RRset and ZSKs for the rest when both kinds are there (the SEP bit), else every
 * key for everything, as CoreDNS. */
export function keySet(keys: readonly SigningKey[]): KeySet {
  const ksk = keys.filter((k) => (k.flags & SEP) !== 0);
  const zsk = keys.filter((k) => (k.flags & SEP) === 0);
  return ksk.length > 0 && zsk.length > 0
    ? { forDnskey: ksk, forOthers: zsk }
    : { forDnskey: keys, forOthers: keys };
}

export function dnssec(o: DnssecOptions): Plugin {
  const keys = keySet(o.keys);
  const zoneOf = (qname: string) => o.zones.find((z) => isSubdomain(qname, z));
  return (next: Handler): Handler => ({
    name: "dnssec",
    // Queries without DO and not for DNSKEY pass, and so does anything outside the zones: the lane
    // answers them as it would without dnssec.
    lane: {
      kind: "pass",
      passes: (q) => (!q.dnssecOk && q.qtype !== DNSKEY) || zoneOf(q.qname) === undefined,
    },
    async serve(req) {
      const zone = zoneOf(req.qname);
      if (zone === undefined) return next.serve(req);
      const signing = req.msg.edns?.do === true;
      const c: SignContext = { keys, signatures: o.signatures, server: req.server };
      if (signing) o.served?.(req.server);
      if (req.qtype === DNSKEY && req.qname === zone) {
        req.answeredBy = "dnssec";
        const reply = replyTo(req.msg);
        reply.aa = true;
        reply.answer = o.keys.map((k) => dnskeyRecord(k, zone, DNSKEY_TTL));
        if (signing) signSections(reply, zone, c);
        return reply;
      }
      if (!signing) return next.serve(req);
      const reply = await next.serve(req);
      // Only what this server is the authority for: never a forwarded reply or a failure. A referral
      // is not authoritative, but the DS (or its absence) at the cut is this zone's to prove.
      if (req.answeredBy === "forward") return reply;
      if (reply.rcode !== Rcode.NOERROR && reply.rcode !== Rcode.NXDOMAIN) return reply;
      const cut = cutOf(reply, zone);
      if (cut !== undefined) {
        signReferral(reply, zone, cut, c);
        return reply;
      }
      if (!reply.aa) return reply;
      const name = deniedName(reply, req.qname);
      if (!isDenial(reply, req.qtype, name)) {
        signSections(reply, zone, c);
        return reply;
      }
      if (!isSubdomain(name, zone)) return reply;
      const exists = reply.rcode === Rcode.NOERROR;
      const types = exists ? await typesAt(next, req, name) : undefined;
      signDenial(reply, zone, { name, types: types?.filter((t) => t !== req.qtype && t !== Type.CNAME) }, c);
      // The black lie is the name's NSEC RRset: an NSEC question gets it as its answer (CoreDNS too);
      // a NODATA for NSEC proven by an NSEC would contradict itself.
      if (req.qtype === NSEC) nsecAsAnswer(reply);
      return reply;
    },
  });
}

/** CoreDNS's bit map for a name whose types are unknown: most types a name holds, so that no resolver
 * that reuses NSEC records (RFC 8198) denies one the name has. Used when the ANY probe fails. */
const PRESUMED = [
  Type.A,
  Type.HINFO,
  Type.TXT,
  Type.AAAA,
  29, // LOC
  Type.SRV,
  37, // CERT
  44, // SSHFP
  52, // TLSA
  55, // HIP
  61, // OPENPGPKEY
  99, // SPF
];

/** The types `name` holds, as the plugins after dnssec answer an ANY question for it (a request of its
 * own, with a policy of its own, so nothing about it reaches the client's reply or the answer store). */
async function typesAt(next: Handler, req: Request, name: string): Promise<number[]> {
  const probe: Request = {
    ...req,
    msg: { ...req.msg, question: [{ name, type: Type.ANY, class: Class.IN }] },
    qname: name,
    spelled: undefined,
    qtype: Type.ANY,
    qclass: Class.IN,
    cache: new AnswerPolicy<Request>(),
    stream: undefined,
  };
  let r: Msg;
  try {
    r = await next.serve(probe);
  } catch {
    return PRESUMED;
  }
  if (r.rcode === Rcode.NXDOMAIN) return [];
  if (r.rcode !== Rcode.NOERROR) return PRESUMED;
  // At a delegation point the ANY probe is referred: the parent holds the cut's NS (and DS) records.
  const held = r.aa ? r.answer : r.authority;
  return held.filter((rr: RR) => rr.name === name && rr.type !== RRSIG).map((rr) => rr.type);
}
