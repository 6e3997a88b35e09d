// The k8s_external handler: answers queries in its zones from the kubernetes plugin's store
// (records.ts) and passes every other query on. Like the kubernetes plugin it holds queries until the
// store's first sync (up to startup_timeout), then answers SERVFAIL with the zone's SOA; an NXDOMAIN
// under a `fallthrough` zone goes to the next plugin. The kubernetes plugin's decision
// (kubernetes/answers/decision.ts) says which, for the chain and the wire lane alike.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { StoreAnswers } from "../kubernetes/answers/decision.ts";
import { serveFromStore } from "../kubernetes/answers/serve-from-store.ts";
import { laneStep } from "../kubernetes/answers/answer-in-lane.ts";

export interface ExternalHandlerOptions {
  /** How to answer from the records; known once the instance starts. */
  answers: () => StoreAnswers | undefined;
}

export function k8sExternal(o: ExternalHandlerOptions): Plugin {
  return (next) => k8sExternalHandler(o, next);
}

export function k8sExternalHandler(o: ExternalHandlerOptions, next: Handler): Handler {
  return {
    name: "k8s_external",
    lane: laneStep(o.answers),
    serve(req) {
      const s = o.answers();
      return s === undefined ? next.serve(req) : serveFromStore(req, next, s);
    },
  };
}
