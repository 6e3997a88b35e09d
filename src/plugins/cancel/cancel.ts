// cancel: a deadline for each query. It sets Request.deadline, which forward, internal lookups and
// erratic's delay honour, and answers SERVFAIL itself when the deadline passes with the rest of the
// chain still at work, whatever the plugin it waits on: that work is abandoned (its reply, if one
// comes, is dropped). CoreDNS's forward also ends with SERVFAIL when its context is cancelled.

import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import { failure } from "../../chain/handler.ts";
import { PASS_ALL } from "../../answers/lane-step.ts";
import { Rcode, typeName } from "../../dns/constants.ts";

/** CoreDNS's default: one millisecond past the 5 s after which DNS clients give up. */
export const DEFAULT_TIMEOUT_MS = 5001;

export function cancel(timeoutMs: number, log: Logger): (next: Handler) => Handler {
  return (next) => ({
    name: "cancel",
    // An answer in the wire lane is given in the same turn: no deadline can pass during it.
    lane: PASS_ALL,
    serve: (req) => withDeadline(req, next, timeoutMs, log),
  });
}

function withDeadline(req: Request, next: Handler, timeoutMs: number, log: Logger): Promise<Msg> {
  const deadline = Date.now() + timeoutMs;
  // A deadline already set (a second cancel, an internal lookup's) is only ever brought closer.
  if (req.deadline === undefined || deadline < req.deadline) req.deadline = deadline;
  const wait = Math.max(0, req.deadline - Date.now());
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<Msg>((resolve) => {
    timer = setTimeout(() => {
      log.debug({ qname: req.qname, qtype: typeName(req.qtype), timeoutMs }, "deadline passed: SERVFAIL");
      req.answeredBy = "cancel";
      resolve(failure(req, Rcode.SERVFAIL));
    }, wait);
  });
  return Promise.race([next.serve(req), expired]).finally(() => clearTimeout(timer));
}
