// The contract every plugin implements, after CoreDNS's plugin.Handler: a handler answers, passes the
// query to the next handler, or returns an error rcode. A plugin is a function from "next" to handler;
// the chain order comes from the registry (src/plugins/index.ts), never from the Corefile.
//
// Unlike CoreDNS, a handler returns the reply instead of writing it to a ResponseWriter: the cache,
// autopath and the log/metrics hook then see the reply as a value, with no writer wrappers needed.

import type { Msg } from "../dns/message.ts";
import { replyTo } from "../dns/message.ts";
import { Class, Rcode } from "../dns/constants.ts";
import type { LaneStep } from "../answers/lane-step.ts";
import type { Request } from "./request.ts";

export interface Handler {
  readonly name: string;
  serve(req: Request): Promise<Msg>;
  /** What the handler does in the wire lane (src/answers/lane.ts): the synchronous path that answers
   * a query the answer store misses without a Request, a promise or a decoded query. A handler
   * without one ends the lane there (the query takes the chain). */
  readonly lane?: LaneStep;
}

export type Plugin = (next: Handler) => Handler;

/** A reply with only an rcode: what a plugin returns to fail a query (SERVFAIL, REFUSED, ...). */
export function failure(req: Request, rcode: number): Msg {
  return replyTo(req.msg, rcode);
}

/** The end of every chain: nothing handled the query. CoreDNS answers SERVFAIL here too; a query of
 * a class other than IN (or ANY) that no plugin answered gets REFUSED: there is no data of that class
 * here, which is no failure of the server (resolvers count a SERVFAIL against it). */
export const endOfChain: Handler = {
  name: "end",
  serve(req) {
    const served = req.qclass === Class.IN || req.qclass === Class.ANY;
    return Promise.resolve(failure(req, served ? Rcode.SERVFAIL : Rcode.REFUSED));
  },
};

/** True for the rcodes that mean "this plugin could not answer" rather than a real answer. */
export function isFailureRcode(rcode: number): boolean {
  return (
    rcode === Rcode.SERVFAIL || rcode === Rcode.REFUSED || rcode === Rcode.FORMERR || rcode === Rcode.NOTIMP
  );
}
