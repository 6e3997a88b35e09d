// local: answers the names that must never leave the host (RFC 6761 6.3, RFC 6303) as CoreDNS's
// *local* does: `localhost.` and every name under it, `localhost.<anything>` (the legacy prefix a
// search list makes of `localhost`, unless `localhost_prefix off`), and the zones 0, 127 and 255 of
// in-addr.arpa, with 1.0.0.127.in-addr.arpa's PTR. Beyond CoreDNS, ::1's ip6.arpa name has its PTR
// too. Everything else goes on; the lane lets it through without a Request.

import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { LaneResult } from "../../answers/lane-step.ts";
import { localhostAsked } from "./metrics.ts";

/** CoreDNS's TTL for every record of these zones: a week. */
export const LOCAL_TTL = 604800;

const LOCALHOST = "localhost.";
const ZONES = [LOCALHOST, "0.in-addr.arpa.", "127.in-addr.arpa.", "255.in-addr.arpa."];
const LOOPBACK_PTR = "1.0.0.127.in-addr.arpa.";
const LOOPBACK6_PTR = "1." + "0.".repeat(31) + "ip6.arpa.";

export interface LocalOptions {
  /** Answer `localhost.<domain>` with the loopback addresses (localhost_prefix on, the default). */
  prefix: boolean;
}

export function local(o: LocalOptions) {
  return (next: Handler): Handler => ({
    name: "local",
    lane: {
      kind: "answer",
      answer: (q) => (q.qclass !== Class.CH && isLocal(o, q.qname) ? LaneResult.chain : LaneResult.next),
    },
    serve(req) {
      if (req.qclass === Class.CH || !isLocal(o, req.qname)) return next.serve(req);
      req.answeredBy = "local";
      return Promise.resolve(answer(o, req));
    },
  });
}

function isLocal(o: LocalOptions, name: string): boolean {
  return loopbackName(o, name) || name === LOOPBACK6_PTR || ZONES.some((z) => isSubdomain(name, z));
}

/** A name under `localhost.` (RFC 6761 6.3), or `localhost.` followed by a domain. */
function loopbackName(o: LocalOptions, name: string): boolean {
  return (
    name.length > LOCALHOST.length &&
    (name.endsWith("." + LOCALHOST) || (o.prefix && name.startsWith(LOCALHOST)))
  );
}

function answer(o: LocalOptions, req: Request): Msg {
  const m = replyTo(req.msg);
  const name = req.qname;
  const qtype = req.qtype;
  if (loopbackName(o, name)) {
    // Counted per query, as CoreDNS does, so never replayed from the answer store. They are rare:
    // a client that asks them is what the counter is there to find.
    localhostAsked();
    req.cache.private = true;
    if (qtype === Type.A || qtype === Type.AAAA) m.answer = [address(name, qtype)];
    else m.authority = [soa(name)];
    return m;
  }
  if (name === LOOPBACK6_PTR || name === LOOPBACK_PTR) {
    if (qtype === Type.PTR) m.answer = [rr(name, { type: Type.PTR, target: LOCALHOST })];
    else m.authority = [soa(zoneOf(name))];
    return m;
  }
  if (ZONES.includes(name)) {
    if ((qtype === Type.A || qtype === Type.AAAA) && name === LOCALHOST) m.answer = [address(name, qtype)];
    else if (qtype === Type.SOA) m.answer = [soa(name)];
    else if (qtype === Type.NS) m.answer = [rr(name, { type: Type.NS, target: LOCALHOST })];
    else m.authority = [soa(name)];
    return m;
  }
  m.rcode = Rcode.NXDOMAIN;
  m.authority = [soa(zoneOf(name))];
  return m;
}

/** The zone of these a name is in (for ::1's name, which is in none of CoreDNS's: itself). */
function zoneOf(name: string): string {
  return ZONES.find((z) => isSubdomain(name, z)) ?? name;
}

function address(name: string, qtype: number): RR {
  return qtype === Type.A
    ? rr(name, { type: Type.A, address: "127.0.0.1" })
    : rr(name, { type: Type.AAAA, address: "::1" });
}

function soa(origin: string): RR {
  return rr(origin, {
    type: Type.SOA,
    mname: LOCALHOST,
    rname: "root.localhost.",
    serial: 1,
    refresh: 0,
    retry: 0,
    expire: 0,
    minimum: LOCAL_TTL,
  });
}

function rr(name: string, data: RR["data"]): RR {
  return { name, type: data.type, class: Class.IN, ttl: LOCAL_TTL, data };
}
