// The kubernetes handler: answers queries inside the stanza's zones from the store (answers/records.ts) and
// passes every other query on. Until the first sync it holds queries up to the startup deadline, then
// answers SERVFAIL with the zone's SOA, as CoreDNS does; once synced it answers from what it knows,
// also while the API is away.

import type { Handler, Plugin } from "../../chain/handler.ts";
import { LaneResult } from "../../answers/lane-step.ts";
import { failure } from "../../chain/handler.ts";
import { isSubdomain } from "../../dns/name.ts";
import type { Msg } from "../../dns/message.ts";
import { Class, EXPLAIN_OPTION, Rcode, Type } from "../../dns/constants.ts";
import type { Records } from "./answers/records.ts";
import type { Store } from "./store/store.ts";
import { isReverseZone } from "./names/zones.ts";
import { explain, explainRecords } from "./answers/explain.ts";
import type { StartupGate } from "./sync/startup-gate.ts";
import { serveFromStore, type StoreAnswers } from "./answers/serve-from-store.ts";

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
  const answers: StoreAnswers = {
    name: "kubernetes",
    gate: o.gate,
    fallthrough: o.fallthrough,
    soa: (zone) => records.soa(zone),
    answer: (zone, qname, qtype, spelled) => records.answer(zone, qname, qtype, spelled),
    lookup: o.lookup,
  };

  const fallthrough = o.fallthrough ?? [];
  const fallsThrough = (qname: string) => {
    for (let i = 0; i < fallthrough.length; i++) if (isSubdomain(qname, fallthrough[i])) return true;
    return false;
  };
  return {
    name: "kubernetes",
    // The wire lane: what the store answers at once, as serveFromStore would, for queries that need
    // nothing else (no CNAME to chase, no wait for the sync, no explain, no client spelling in rdata).
    lane: {
      kind: "answer",
      answer(q, out) {
        const zone = records.zoneOf(q.qname);
        if (zone === undefined) return LaneResult.next;
        if (q.qclass !== Class.IN || q.mixedCase || q.options || !o.gate.open) return LaneResult.chain;
        const a = records.answer(zone, q.qname, q.qtype);
        if (a.chase !== undefined || a.uncacheable) return LaneResult.chain;
        if (a.rcode === Rcode.NXDOMAIN && fallsThrough(q.qname)) return LaneResult.chain;
        const m = out.msg;
        m.rcode = a.rcode;
        m.aa = true;
        m.answer = a.answer;
        m.authority = a.authority;
        m.additional = a.additional;
        out.stable = true;
        out.plugin = "kubernetes";
        return LaneResult.answered;
      },
    },
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
      return serveFromStore(req, zone, next, answers, (reply) => {
        if (!req.msg.edns?.options.some((x) => x.code === EXPLAIN_OPTION) || isReverseZone(zone)) return;
        req.cache.private = true;
        const lines = explain(store, records.options, zone, req.qname);
        reply.additional = [...reply.additional, ...explainRecords(req.qname, lines)];
      });
    },
  };
}
