// acl: allows, blocks, filters or drops queries by the client's address and the query's type
// (policy.ts decides). A blocked query is answered REFUSED, a filtered one NOERROR with no records,
// each with the extended DNS error saying so (RFC 8914: 15 Blocked, 17 Filtered) for EDNS clients; a
// dropped one gets no reply at all. Where the decision for a question depends on who asks, no reply
// to it is replayed from the answer cache: the fast path would hand one client's answer to another.

import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import type { Rule } from "./policy.ts";
import { failure } from "../../chain/handler.ts";
import { setReplyOption } from "../../dns/message.ts";
import { EdnsOption, Rcode } from "../../dns/constants.ts";
import { decide } from "./policy.ts";
import { aclStats } from "./stats.ts";

/** RFC 8914 4: INFO-CODEs. */
const BLOCKED = Uint8Array.of(0, 15);
const FILTERED = Uint8Array.of(0, 17);

export function acl(rules: readonly Rule[]): (next: Handler) => Handler {
  return (next) => ({
    name: "acl",
    serve(req) {
      // An internal lookup (autopath's walk, an ExternalName's target) is the server's own: the
      // client's query was checked when it came in.
      if (req.remoteAddress === "") return next.serve(req);
      const d = decide(rules, req.qname, req.qtype, req.remoteAddress);
      if (d.zone === "") return next.serve(req);
      if (d.bySource) req.cache.private = true;
      aclStats(req.server, d.zone)[d.action]++;
      switch (d.action) {
        case "allow":
          return next.serve(req);
        case "block":
          return Promise.resolve(refuse(req, Rcode.REFUSED, BLOCKED));
        case "filter":
          return Promise.resolve(refuse(req, Rcode.NOERROR, FILTERED));
        case "drop":
          req.noReply = true;
          return Promise.resolve(failure(req, Rcode.REFUSED));
      }
    },
  });
}

function refuse(req: Request, rcode: number, ede: Uint8Array): Msg {
  req.answeredBy = "acl";
  const m = failure(req, rcode);
  setReplyOption(m, EdnsOption.EDE, ede);
  return m;
}
