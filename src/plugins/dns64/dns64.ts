// dns64: AAAA synthesis for IPv6-only clients behind NAT64 (RFC 6147). An AAAA question of class IN
// goes on down the chain; when the reply holds no usable AAAA record (NODATA, or an rcode other than
// NXDOMAIN, 5.1.2; an IPv4-mapped AAAA does not count, 5.1.4) or `translate_all` is on, the chain is
// asked for the name's A records and each becomes an AAAA under the prefix (RFC 6052), the other
// records (a CNAME chain) unchanged (5.3.3).
//
// What the answer store may keep: the synthesized reply is not the one `cache` decided to keep
// (AnswerPolicy.kept and countedBy are cleared); it is kept for its records' TTL within the narrowest
// of both lookups' terms (without `cache`, a forwarded A for a second, a kubernetes one until its name
// changes). While dns64 runs, the plugins after it never see the client's stored entry or its
// refresh: cache's prefetch or serve_stale would fetch without dns64 and file a bare NODATA where
// synthesis is due. And when the block takes both IPv4 and IPv6 clients without `allow_ipv4`, the
// reply depends on the client's family: setup asks the listener to key an IPv4 client's AAAA
// question apart (BlockSettings.familyKeys), so neither family is replayed the other's reply.

import { isIPv6 } from "node:net";
import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { negativeTtl, replyTo } from "../../dns/message.ts";
import { AnswerPolicy } from "../../answers/policy.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { plainAddress } from "../../dns/nets.ts";
import { embed, isMapped, type Pref64 } from "./prefix.ts";
import { translated } from "./metrics.ts";

/** RFC 6147 5.1.7: the TTL cap when the AAAA reply carried no SOA. */
export const NO_SOA_TTL = 600;

export interface Dns64Options {
  prefix: Pref64;
  translateAll: boolean;
  allowIpv4: boolean;
  /** The address families the block listens on (no `bind`: both), whose clients share its answer
   * store. */
  families: { v4: boolean; v6: boolean };
}

export function dns64(o: Dns64Options): Plugin {
  // Without allow_ipv4, a block that listens on IPv4 only never translates (setup says so).
  const inert = !o.allowIpv4 && !o.families.v6;
  return (next: Handler): Handler => ({
    name: "dns64",
    // Everything but AAAA IN goes on in the wire lane; those need the chain (the client's family, a
    // second lookup).
    lane: { kind: "pass", passes: (q) => q.qtype !== Type.AAAA || q.qclass !== Class.IN || inert },
    serve(req) {
      if (req.qtype !== Type.AAAA || req.qclass !== Class.IN || inert) return next.serve(req);
      if (!o.allowIpv4 && !isIPv6(plainAddress(req.remoteAddress))) return next.serve(req);
      // RFC 6147 5.5: a client that validates itself (DO and CD) gets the data as it is, never a
      // synthesized record it could not validate. The store keys DO and CD apart.
      if (req.msg.cd && req.msg.edns?.do === true) return next.serve(req);
      return translate(o, req, next);
    },
  });
}

async function translate(o: Dns64Options, req: Request, next: Handler): Promise<Msg> {
  const outer = req.cache;
  const { stored, refresh } = outer;
  outer.stored = undefined;
  outer.refresh = undefined;
  try {
    const first = await next.serve(req);
    if (!due(o, first)) return first;
    const policy = new AnswerPolicy<Request>();
    const asked: Request = {
      ...req,
      msg: { ...req.msg, question: [{ name: req.qname, type: Type.A, class: Class.IN }] },
      qtype: Type.A,
      cache: policy,
    };
    const a = await next.serve(asked);
    narrow(outer, policy);
    outer.kept = undefined;
    if (!a.answer.some((rr) => rr.type === Type.A)) {
      // No IPv4 address either: the AAAA reply as it was (its SOA says how long to keep the denial),
      // or, when that was a failure, what the A lookup found.
      return first.rcode === Rcode.NOERROR ? first : sameQuestion(req, a);
    }
    translated(req.server);
    req.answeredBy = "dns64";
    // Its replays are no cache misses (nothing is looked up): cache counts the lookups, not them.
    outer.countedBy = undefined;
    return synthesize(o.prefix, req, first, a);
  } finally {
    outer.stored = stored;
    outer.refresh = refresh;
  }
}

/** RFC 6147 5.1.1, 5.1.2, 5.1.4: synthesis is due unless the name does not exist or has an AAAA. */
function due(o: Dns64Options, first: Msg): boolean {
  if (first.rcode === Rcode.NXDOMAIN) return false;
  if (o.translateAll) return true;
  return !first.answer.some(
    (rr) => rr.type === Type.AAAA && !isMapped((rr.data as { address: string }).address),
  );
}

/** The reply to the AAAA question from the A lookup's: A records under the prefix, every other record
 * as it was (5.3.3), the authority and additional sections passed on (5.3.2). */
function synthesize(prefix: Pref64, req: Request, first: Msg, a: Msg): Msg {
  // 5.1.7: no longer than the A record, nor than the AAAA denial's SOA says (600 s without one).
  const cap = negativeTtl(first.authority) ?? NO_SOA_TTL;
  const reply = replyTo(req.msg, Rcode.NOERROR);
  reply.aa = a.aa;
  reply.ra = a.ra;
  reply.answer = a.answer.map((rr): RR => {
    if (rr.type !== Type.A) return rr;
    const address = embed(prefix, (rr.data as { address: string }).address);
    return { ...rr, type: Type.AAAA, ttl: Math.min(rr.ttl, cap), data: { type: Type.AAAA, address } };
  });
  reply.authority = a.authority;
  reply.additional = a.additional;
  return reply;
}

function sameQuestion(req: Request, m: Msg): Msg {
  return { ...m, id: req.msg.id, question: req.msg.question.map((q) => ({ ...q })) };
}

/** What the A lookup's plugins decided about keeping their reply narrows the synthesized one's. */
function narrow(outer: AnswerPolicy<Request>, inner: AnswerPolicy<Request>): void {
  outer.private ||= inner.private;
  outer.limit(inner.maxAge);
  outer.stable &&= inner.stable;
  outer.outside ||= inner.outside;
  outer.rotate = inner.rotate;
}
