// What the cache keeps of one reply, and how a kept reply becomes an answer again.

import type { Msg, RR } from "../../dns/message.ts";
import { negativeTtl, replyTo } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";

/** Which of the two caches a reply goes to (CoreDNS: success and denial). */
export type Kind = "success" | "denial";

export interface Entry {
  readonly kind: Kind;
  readonly rcode: number;
  readonly aa: boolean;
  readonly ra: boolean;
  readonly ad: boolean;
  readonly answer: readonly RR[];
  readonly authority: readonly RR[];
  readonly additional: readonly RR[];
  /** When it was stored (ms) and for how long it is fresh (s). */
  readonly stored: number;
  readonly ttl: number;
  /** Hits with no gap of the prefetch DURATION or more between them, and when the last one was. */
  hits: number;
  lastHit: number;
  /** A refresh is under way (prefetch or stale refresh): do not start another. */
  refreshing: boolean;
}

/** How a reply is cached, or undefined when it is not: NOERROR with records (and referrals) are
 * successes; NXDOMAIN and NODATA are denials; SERVFAIL is a denial kept only `servfail` seconds. */
export function kindOf(reply: Msg): Kind | undefined {
  if (reply.rcode === Rcode.NOERROR) {
    if (reply.answer.length > 0) return "success";
    return reply.authority.some((rr) => rr.type === Type.NS) ? "success" : "denial";
  }
  if (reply.rcode === Rcode.NXDOMAIN || reply.rcode === Rcode.SERVFAIL) return "denial";
  return undefined;
}

/** The lowest TTL of the reply's records; for a denial, the SOA's negative TTL (RFC 2308:
 * min(SOA TTL, SOA MINIMUM)). Undefined when the reply holds nothing that says. */
export function replyTtl(reply: Msg, kind: Kind): number | undefined {
  if (kind === "denial") return negativeTtl(reply.authority);
  let min: number | undefined;
  for (const section of [reply.answer, reply.authority, reply.additional]) {
    for (const rr of section) if (min === undefined || rr.ttl < min) min = rr.ttl;
  }
  return min;
}

/** A copy of the reply's records: later plugins (loadbalance) reorder the reply they get. */
export function makeEntry(reply: Msg, kind: Kind, ttl: number, now: number): Entry {
  const copy = (rrs: RR[]) => rrs.map((rr) => ({ ...rr }));
  return {
    kind,
    rcode: reply.rcode,
    aa: reply.aa,
    ra: reply.ra,
    ad: reply.ad,
    answer: copy(reply.answer),
    authority: copy(reply.authority),
    additional: copy(reply.additional),
    stored: now,
    ttl,
    hits: 0,
    lastHit: now,
    refreshing: false,
  };
}

/** Seconds of freshness left at `now`: negative once expired. */
export function remaining(e: Entry, now: number): number {
  return e.ttl - Math.floor((now - e.stored) / 1000);
}

/** The answer to `query` from an entry, with `ttl` as every record's TTL: as in CoreDNS, the entry's
 * time left (its whole TTL with keepttl, 0 when stale), so no record outlives the entry downstream. */
export function answerFrom(e: Entry, query: Msg, ttl: number): Msg {
  const reply = replyTo(query, e.rcode);
  reply.aa = e.aa;
  reply.ra = e.ra;
  reply.ad = e.ad;
  const at = (rrs: readonly RR[]) => rrs.map((rr) => ({ ...rr, ttl }));
  reply.answer = at(e.answer);
  reply.authority = at(e.authority);
  reply.additional = at(e.additional);
  return reply;
}
