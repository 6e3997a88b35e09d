// The plugin chain's way of carrying out the decision (decision.ts) for a query the kubernetes plugin
// or k8s_external may answer: it waits for the first sync when held, follows an ExternalName's CNAME
// target through the server, and says how the reply may be kept.

import type { Handler } from "../../../chain/handler.ts";
import type { Request } from "../../../chain/request.ts";
import { failure } from "../../../chain/handler.ts";
import type { Msg } from "../../../dns/message.ts";
import { replyTo } from "../../../dns/message.ts";
import { Rcode } from "../../../dns/constants.ts";
import { chase } from "./records.ts";
import { Decision, Keep, Verdict, decide, type Question, type StoreAnswers } from "./decision.ts";

/** `req` as the decision reads it. */
function question(req: Request): Question {
  return {
    qname: req.qname,
    qtype: req.qtype,
    qclass: req.qclass,
    spelled: req.spelled,
    option: (code) => req.msg.edns?.options.some((o) => o.code === code) ?? false,
  };
}

/** Serves `req` as the plugin `s` decides. */
export async function serveFromStore(req: Request, next: Handler, s: StoreAnswers): Promise<Msg> {
  const q = question(req);
  const d = decide(s, q, new Decision());
  if (d.verdict === Verdict.hold) {
    await s.gate.synced();
    decide(s, q, d, true);
  }
  switch (d.verdict) {
    case Verdict.next:
      return next.serve(req);
    case Verdict.refuse:
      req.answeredBy = s.name;
      return failure(req, Rcode.REFUSED);
    case Verdict.servfail: {
      req.answeredBy = s.name;
      const reply = failure(req, Rcode.SERVFAIL);
      reply.aa = true;
      reply.authority = [s.soa(d.zone)];
      return reply;
    }
  }
  const a = d.answer!;
  req.answeredBy = s.name;
  if (a.chase !== undefined)
    await chase(a, req.qtype, (n, t) => s.lookup(n, t, (req.depth ?? 0) + 1, req.deadline));
  if (d.keep === Keep.never) req.cache.private = true;
  else if (d.keep === Keep.untilChanged) req.cache.stable = true;
  const reply = replyTo(req.msg, a.rcode);
  reply.aa = true;
  reply.answer = a.answer;
  reply.authority = a.authority;
  reply.additional = d.explain ? [...a.additional, ...s.explain!(d.zone, req.qname)] : a.additional;
  return reply;
}
