// The kubernetes handler: answers queries inside the stanza's zones from the store (records.ts) and
// passes every other query on. Until the first sync it holds queries up to the startup deadline, then
// answers SERVFAIL with the zone's SOA, as CoreDNS does; once synced it answers from what it knows,
// also while the API is away.

import type { Handler, Plugin, Request } from "../../plugin.ts";
import { failure } from "../../plugin.ts";
import type { Msg } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, EXPLAIN_OPTION, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import type { Records } from "./records.ts";
import { chase } from "./records.ts";
import type { Store } from "./store.ts";
import { isReverseZone } from "./store.ts";
import { explain, explainRecords } from "./explain.ts";
import type { StartupGate } from "./startup-gate.ts";

/** `zone` as the client spelled it in the question (0x20), or `zone` itself. */
export function spelledZone(req: Request, zone: string): string {
  const s = req.spelled;
  if (s === undefined || s.toLowerCase() !== req.qname) return zone;
  return s.slice(s.length - zone.length);
}

export interface KubernetesOptions {
  store: Store;
  records: Records;
  /** Zones in which an NXDOMAIN goes to the next plugin instead (`fallthrough`); "." for all. */
  fallthrough?: readonly string[];
  /** Holds queries until the first sync or the startup deadline. */
  gate: StartupGate;
  /** SetupContext.lookup, for ExternalName targets. */
  lookup: (name: string, qtype: number, depth?: number) => Promise<Msg>;
}

export function kubernetesPlugin(o: KubernetesOptions): Plugin {
  return (next) => kubernetesHandler(o, next);
}

export function kubernetesHandler(o: KubernetesOptions, next: Handler): Handler {
  const { store, records } = o;
  const fallsThrough = (qname: string) => o.fallthrough?.some((z) => isSubdomain(qname, z)) ?? false;

  async function serve(req: Request, zone: string): Promise<Msg> {
    if (!store.synced && !(await o.gate.synced())) {
      // CoreDNS (plugin/kubernetes/handler.go): an unknown name before the sync falls through where
      // `fallthrough` says so, and is otherwise SERVFAIL with the zone's SOA.
      if (fallsThrough(req.qname)) return next.serve(req);
      req.answeredBy = "kubernetes";
      const reply = failure(req, Rcode.SERVFAIL);
      reply.aa = true;
      reply.authority = [records.soa(zone)];
      return reply;
    }
    const a = records.answer(zone, req.qname, req.qtype, spelledZone(req, zone));
    if (a.rcode === Rcode.NXDOMAIN && fallsThrough(req.qname)) return next.serve(req);
    req.answeredBy = "kubernetes";
    if (a.chase !== undefined) await chase(a, req.qtype, (n, t) => o.lookup(n, t, (req.depth ?? 0) + 1));
    if (a.uncacheable) req.cache.private = true;
    // Every store change invalidates the names it touched; a chased target may come from elsewhere.
    else if (a.chase === undefined) req.cache.stable = true;
    const reply = replyTo(req.msg, a.rcode);
    reply.aa = true;
    reply.answer = a.answer;
    reply.authority = a.authority;
    reply.additional = a.additional;
    if (req.msg.edns?.options.some((x) => x.code === EXPLAIN_OPTION) && !isReverseZone(zone)) {
      req.cache.private = true;
      const lines = explain(store, records.options, zone, req.qname);
      reply.additional = [...reply.additional, ...explainRecords(req.qname, lines)];
    }
    return reply;
  }

  return {
    name: "kubernetes",
    serve(req) {
      const zone = records.zoneOf(req.qname);
      if (zone === undefined) return next.serve(req);
      // The cluster's names exist in class IN only; REFUSED (not SERVFAIL, which resolvers count
      // against the server) for CH and the like. Zone transfers belong to the transfer plugin, which
      // runs before this one.
      if (
        (req.qclass !== Class.IN && req.qclass !== Class.ANY) ||
        req.qtype === Type.AXFR ||
        req.qtype === Type.IXFR
      ) {
        req.answeredBy = "kubernetes";
        return Promise.resolve(failure(req, Rcode.REFUSED));
      }
      return serve(req, zone);
    },
  };
}
