// How the kubernetes plugin and k8s_external answer a query from the store: held until the first sync
// (then SERVFAIL with the zone's SOA, as CoreDNS's BackendError answers), an NXDOMAIN under a
// `fallthrough` zone to the next plugin, anything else as an authoritative reply that the answer cache
// keeps until the store says the name changed.

import type { Handler } from "../../../chain/handler.ts";
import type { Request } from "../../../chain/request.ts";
import { failure } from "../../../chain/handler.ts";
import type { Msg, RR } from "../../../dns/message.ts";
import { replyTo } from "../../../dns/message.ts";
import { Rcode } from "../../../dns/constants.ts";
import { isSubdomain } from "../../../dns/name.ts";
import type { Answer } from "./records.ts";
import { chase } from "./records.ts";
import type { StartupGate } from "../sync/startup-gate.ts";

export interface StoreAnswers {
  /** The plugin's name, for Request.answeredBy. */
  readonly name: string;
  readonly gate: StartupGate;
  /** Zones in which an NXDOMAIN goes to the next plugin (`fallthrough`); "." for all. */
  readonly fallthrough?: readonly string[];
  soa(zone: string): RR;
  answer(zone: string, qname: string, qtype: number, spelled: string): Answer;
  /** SetupContext.lookup, to follow CNAME targets. */
  lookup(name: string, qtype: number, depth?: number): Promise<Msg>;
}

/** `zone` as the client spelled it in the question (0x20), or `zone` itself. */
export function spelledZone(req: Request, zone: string): string {
  const s = req.spelled;
  if (s === undefined || s.toLowerCase() !== req.qname) return zone;
  return s.slice(s.length - zone.length);
}

/** Serves `req`, a query in `zone`. `answered` sees a reply the plugin made from the store. */
export async function serveFromStore(
  req: Request,
  zone: string,
  next: Handler,
  s: StoreAnswers,
  answered?: (reply: Msg) => void,
): Promise<Msg> {
  const fallsThrough = s.fallthrough?.some((z) => isSubdomain(req.qname, z)) ?? false;
  if (!s.gate.open && !(await s.gate.synced())) {
    if (fallsThrough) return next.serve(req);
    req.answeredBy = s.name;
    const reply = failure(req, Rcode.SERVFAIL);
    reply.aa = true;
    reply.authority = [s.soa(zone)];
    return reply;
  }
  const a = s.answer(zone, req.qname, req.qtype, spelledZone(req, zone));
  if (a.rcode === Rcode.NXDOMAIN && fallsThrough) return next.serve(req);
  req.answeredBy = s.name;
  if (a.chase !== undefined) await chase(a, req.qtype, (n, t) => s.lookup(n, t, (req.depth ?? 0) + 1));
  if (a.uncacheable) req.cache.private = true;
  // Every store change invalidates the names it touched; a chased target may come from elsewhere.
  else if (a.chase === undefined) req.cache.stable = true;
  const reply = replyTo(req.msg, a.rcode);
  reply.aa = true;
  reply.answer = a.answer;
  reply.authority = a.authority;
  reply.additional = a.additional;
  answered?.(reply);
  return reply;
}
