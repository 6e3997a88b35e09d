// errors: the catch around the rest of the chain. A handler that throws is logged once, with the query,
// and the client gets SERVFAIL; so is a SERVFAIL that carries its cause (Msg.error: forward's upstream
// failures), which is sent as it came. Matching messages can be consolidated (see consolidate.ts).

import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import type { Consolidator } from "./consolidate.ts";
import { PASS_ALL } from "../../answers/lane-step.ts";
import { PluginError } from "../../chain/plugin-error.ts";
import { failure } from "../../chain/handler.ts";
import { Rcode, typeName } from "../../dns/constants.ts";

export interface ErrorsOptions {
  consolidator: Consolidator;
  /** The block has `debug`: an exception that is not a PluginError passes on to the server, which does
   * not recover from it either (CoreDNS's errors handles the errors plugins return, not panics). */
  debug?: boolean;
  /** Log the stack of every error, not only its message. */
  stacktrace: boolean;
  log: Logger;
}

export function errors(opts: ErrorsOptions): (next: Handler) => Handler {
  const { debug } = opts;
  return (next) => ({
    name: "errors",
    // The lane never throws past itself: a failure there sends the query down the chain, through here.
    lane: PASS_ALL,
    async serve(req) {
      let reply: Msg;
      try {
        reply = await next.serve(req);
      } catch (err) {
        if (debug && !(err instanceof PluginError)) throw err;
        report(opts, req, err, Rcode.SERVFAIL);
        if (err instanceof PluginError) req.answeredBy = err.plugin;
        return failure(req, Rcode.SERVFAIL);
      }
      // A failure a plugin answered itself and said why (forward's upstreams, its max_concurrent):
      // logged with its rcode, as CoreDNS logs the rcode a plugin returns with its error, and sent as it is.
      if (reply.error !== undefined && FAILURES.has(reply.rcode)) report(opts, req, reply.error, reply.rcode);
      return reply;
    },
  });
}

/** The rcodes of a reply that is still the failure its error explains (a plugin between may have put an
 * answer in its place). */
const FAILURES = new Set<number>([Rcode.SERVFAIL, Rcode.REFUSED]);

/** Logs the error behind a query's failure once, unless a `consolidate` pattern counts it. */
function report(
  { consolidator, stacktrace, log }: ErrorsOptions,
  req: Request,
  err: unknown,
  rcode: number,
): void {
  const message = err instanceof Error ? err.message : String(err);
  const taken = consolidator.take(message);
  if (taken?.kind === "counted") return;
  const fields = {
    qname: req.qname,
    qtype: typeName(req.qtype),
    code: (err as { code?: unknown }).code,
  };
  // CoreDNS's line: "RCODE NAME TYPE: error".
  const line = `${rcode} ${req.qname} ${fields.qtype}: ${message}`;
  // show_first: the first of a consolidated kind, at the level of its `consolidate` line.
  const level = taken?.level ?? "error";
  if (stacktrace) log[level]({ ...fields, err }, line);
  else log[level](fields, line);
}
