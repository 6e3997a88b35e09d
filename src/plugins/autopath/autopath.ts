// autopath: when a query is NAME.<the first search domain of this client>, walk the client's search
// list here, with internal lookups, and answer with a CNAME from the asked name to the first candidate
// that exists plus that name's records. The client's resolver then stops after one query per type
// instead of one per search domain. Whenever the client or the walk is in doubt, the query is answered
// exactly as without autopath: a saved round trip is never worth a wrong answer.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import { isFailureRcode } from "../../chain/handler.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import type { SearchPathSource } from "./search-path.ts";
import { autopathStats } from "./stats.ts";

export interface AutopathOptions {
  /** Zones whose queries autopath looks at (canonical). */
  zones: readonly string[];
  /** The client's search domains; read at the first query (the source is set up after autopath). */
  source: () => SearchPathSource;
  /** Search domains tried after the client's own (the server's resolv.conf), then the name as is. */
  extra: readonly string[];
  /** SetupContext.lookup: each candidate goes through the zone mux and chains, cache included. */
  lookup: (name: string, qtype: number, depth?: number, deadline?: number) => Promise<Msg>;
}

export function autopath(o: AutopathOptions): Plugin {
  return (next) => autopathHandler(o, next);
}

export function autopathHandler(o: AutopathOptions, next: Handler): Handler {
  const inZones = (qname: string) => o.zones.some((z) => isSubdomain(qname, z));

  async function walk(req: Request, path: readonly string[], base: string): Promise<Msg> {
    const stats = autopathStats(req.server);
    const own = await next.serve(req);
    // The name exists as asked (or the lookup failed): every client gets this same answer.
    if (own.rcode !== Rcode.NXDOMAIN) {
      stats.plain++;
      return own;
    }
    // From here the answer depends on who asked: keep it out of the shared answer cache, and
    // keep the asked name's plain NXDOMAIN out of it too (another client must not replay it).
    req.cache.private = true;
    const tried = new Set([path[0]]);
    for (const domain of [...path.slice(1), ...o.extra, "."]) {
      if (tried.has(domain)) continue;
      tried.add(domain);
      const candidate = domain === "." ? base + "." : `${base}.${domain}`;
      const r = await o.lookup(candidate, req.qtype, (req.depth ?? 0) + 1, req.deadline);
      if (r.rcode === Rcode.NXDOMAIN) continue;
      if (isFailureRcode(r.rcode)) {
        // Unknown whether the candidate exists: let the client walk its list itself.
        stats.failed++;
        return own;
      }
      stats.cname++;
      req.answeredBy = "autopath";
      return withCname(req, candidate, r);
    }
    stats.nxdomain++;
    return own;
  }

  return {
    name: "autopath",
    serve(req) {
      // Internal lookups (our own candidates, ExternalName chases) are never walked again.
      if ((req.depth ?? 0) > 0 || req.qclass !== Class.IN || !inZones(req.qname)) return next.serve(req);
      const path = o.source().searchPath(req.remoteAddress, req.qname);
      const first = path?.[0];
      if (path === undefined || first === undefined) {
        autopathStats(req.server).unknownClient++;
        return plain(req, next);
      }
      const reply =
        req.qname === first || !isSubdomain(req.qname, first)
          ? plain(req, next)
          : walk(req, path, req.qname.slice(0, req.qname.length - first.length - 1));
      // A name below one of the client's own search domains is (most likely) one its resolver made.
      const expansion = path.some((d) => req.qname !== d && isSubdomain(req.qname, d));
      return expansion ? counted(req.server, reply) : reply;
    },
  };
}

/** Counts a search-list expansion and whether it ended in NXDOMAIN (the client then tries the next). */
async function counted(server: string, pending: Promise<Msg>): Promise<Msg> {
  const reply = await pending;
  const s = autopathStats(server);
  s.expansions++;
  if (reply.rcode === Rcode.NXDOMAIN) s.expansionsNxdomain++;
  return reply;
}

/** Answers as without autopath; an NXDOMAIN stays out of the shared answer cache, since a pod whose
 * first search domain this name ends with would get a walk, not that NXDOMAIN. */
async function plain(req: Request, next: Handler): Promise<Msg> {
  const reply = await next.serve(req);
  if (reply.rcode === Rcode.NXDOMAIN) req.cache.private = true;
  return reply;
}

/** The reply to the asked name: a CNAME to `target`, then what `target`'s lookup answered. A NODATA
 * target gets no CNAME (as CoreDNS's): glibc stops its walk at any answer record, but goes on after
 * NODATA, as it would have after `target`'s own NODATA without autopath. */
function withCname(req: Request, target: string, r: Msg): Msg {
  const reply = replyTo(req.msg, r.rcode);
  reply.aa = r.aa;
  reply.ra = r.ra;
  const cname: RR = {
    name: req.qname,
    type: Type.CNAME,
    class: Class.IN,
    ttl: r.answer[0]?.ttl ?? 0,
    data: { type: Type.CNAME, target },
  };
  reply.answer = r.answer.length > 0 ? [cname, ...r.answer] : [];
  reply.authority = r.authority;
  reply.additional = r.additional;
  return reply;
}
