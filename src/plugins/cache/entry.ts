// Which replies the cache keeps, as what, and for how long their records say.

import type { CacheKind } from "../../answers/policy.ts";
import type { Msg } from "../../dns/message.ts";
import { negativeTtl } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";

/** How a reply is cached, or undefined when it is not: NOERROR with records (and referrals) are
 * successes; NXDOMAIN and NODATA are denials; SERVFAIL is a denial kept only `servfail` seconds. */
export function kindOf(reply: Msg): CacheKind | undefined {
  if (reply.rcode === Rcode.NOERROR) {
    if (reply.answer.length > 0) return "success";
    return reply.authority.some((rr) => rr.type === Type.NS) ? "success" : "denial";
  }
  if (reply.rcode === Rcode.NXDOMAIN || reply.rcode === Rcode.SERVFAIL) return "denial";
  return undefined;
}

/** The lowest TTL of the reply's records; for a denial, the SOA's negative TTL (RFC 2308:
 * min(SOA TTL, SOA MINIMUM)). Undefined when the reply holds nothing that says. */
export function replyTtl(reply: Msg, kind: CacheKind): number | undefined {
  if (kind === "denial") return negativeTtl(reply.authority);
  let min: number | undefined;
  for (const section of [reply.answer, reply.authority, reply.additional]) {
    for (const rr of section) if (min === undefined || rr.ttl < min) min = rr.ttl;
  }
  return min;
}
