// The k8s_external handler: answers queries in its zones from the kubernetes plugin's store
// (records.ts) and passes every other query on. Like the kubernetes plugin it holds queries until the
// store's first sync (up to startup_timeout), then answers SERVFAIL with the zone's SOA; an NXDOMAIN
// under a `fallthrough` zone goes to the next plugin (serve-from-store.ts).

import type { Handler, Plugin } from "../../chain/handler.ts";
import { Class } from "../../dns/constants.ts";
import { serveFromStore, type StoreAnswers } from "../kubernetes/answers/serve-from-store.ts";
import type { ExternalRecords } from "./records.ts";

export interface ExternalHandlerOptions {
  /** The records, and how to serve from them; known once the instance starts. */
  state: () => { records: ExternalRecords; answers: StoreAnswers } | undefined;
}

export function k8sExternal(o: ExternalHandlerOptions): Plugin {
  return (next) => k8sExternalHandler(o, next);
}

export function k8sExternalHandler(o: ExternalHandlerOptions, next: Handler): Handler {
  return {
    name: "k8s_external",
    lane: { kind: "pass", passes: (q) => o.state()?.records.zoneOf(q.qname) === undefined },
    serve(req) {
      const s = o.state();
      if (s === undefined || (req.qclass !== Class.IN && req.qclass !== Class.ANY)) return next.serve(req);
      const zone = s.records.zoneOf(req.qname);
      if (zone === undefined) return next.serve(req);
      return serveFromStore(req, zone, next, s.answers);
    },
  };
}
