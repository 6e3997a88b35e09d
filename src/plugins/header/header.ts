// header: sets or clears header flags of the query on its way down the chain, or of the reply on its
// way back (CoreDNS's header). A query is changed on a copy handed to the next plugins, so the client's
// own query (whose RD and CD bits its reply carries back, RFC 1035 4.1.1, RFC 4035 3.2.2) is untouched.

import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";

export type Flag = "aa" | "ra" | "rd" | "ad" | "cd";

/** The flags to set and to clear, for queries and for replies. */
export interface HeaderRules {
  query: { set: Flag[]; clear: Flag[] };
  response: { set: Flag[]; clear: Flag[] };
}

export function header(rules: HeaderRules): (next: Handler) => Handler {
  const changesQuery = rules.query.set.length + rules.query.clear.length > 0;
  return (next) => ({
    name: "header",
    async serve(req) {
      let inner: Request = req;
      if (changesQuery) {
        inner = { ...req, msg: { ...req.msg } };
        apply(inner.msg, rules.query);
      }
      const reply = await next.serve(inner);
      req.answeredBy = inner.answeredBy;
      apply(reply, rules.response);
      return reply;
    },
  });
}

function apply(m: Msg, r: { set: Flag[]; clear: Flag[] }): void {
  for (const f of r.set) m[f] = true;
  for (const f of r.clear) m[f] = false;
}
