// The kubernetes handler: answers queries inside the stanza's zones from the store (answers/records.ts) and
// passes every other query on. Until the first sync it holds queries up to the startup deadline, then
// answers SERVFAIL with the zone's SOA, as CoreDNS does; once synced it answers from what it knows,
// also while the API is away. One decision (answers/decision.ts) says which, for the chain and the
// wire lane alike.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Msg } from "../../dns/message.ts";
import type { Records } from "./answers/records.ts";
import type { Store } from "./store/store.ts";
import { explain, explainRecords } from "./answers/explain.ts";
import type { StartupGate } from "./sync/startup-gate.ts";
import { inOneRead, type StoreAnswers } from "./answers/decision.ts";
import { serveFromStore } from "./answers/serve-from-store.ts";
import { laneStep } from "./answers/answer-in-lane.ts";

export interface KubernetesOptions {
  store: Store;
  records: Records;
  /** Zones in which an NXDOMAIN goes to the next plugin instead (`fallthrough`); "." for all. */
  fallthrough?: readonly string[];
  /** Holds queries until the first sync or the startup deadline. */
  gate: StartupGate;
  /** SetupContext.lookup, for ExternalName targets. */
  lookup: (name: string, qtype: number, depth?: number, deadline?: number) => Promise<Msg>;
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
    refusesOthers: true,
    zoneOf: (qname) => records.zoneOf(qname),
    soa: (zone) => records.soa(zone),
    answer: inOneRead(store.read, (zone, qname, qtype, spelled) =>
      records.answer(zone, qname, qtype, spelled),
    ),
    explain: (zone, qname) => explainRecords(qname, explain(store, records.options, zone, qname)),
    lookup: o.lookup,
  };
  return {
    name: "kubernetes",
    lane: laneStep(() => answers),
    serve: (req) => serveFromStore(req, next, answers),
  };
}
