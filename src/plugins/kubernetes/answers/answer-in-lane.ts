// The wire lane's way of carrying out the decision (decision.ts) for the kubernetes plugin and
// k8s_external: in the same turn, writing the store's answer into the lane's reply when the decision
// lets the answer store replay it until its name changes. Anything else the decision asks for (a
// wait for the first sync, a CNAME target to look up, a reply for this client alone, REFUSED,
// SERVFAIL) is the chain's to carry out, and a question that is not the plugin's goes on down the
// lane, as it goes on down the chain.

import { LaneResult, type LaneStep } from "../../../answers/lane-step.ts";
import { Decision, Keep, Verdict, decide, type StoreAnswers } from "./decision.ts";

/** The lane step of the plugin `answers` describes (undefined before it starts: not its question). */
export function laneStep(answers: () => StoreAnswers | undefined): LaneStep {
  const d = new Decision();
  return {
    kind: "answer",
    answer(q, out) {
      const s = answers();
      if (s === undefined) return LaneResult.next;
      decide(s, q, d);
      if (d.verdict === Verdict.next) return LaneResult.next;
      if (d.verdict !== Verdict.answer || d.keep !== Keep.untilChanged) return LaneResult.chain;
      const a = d.answer!;
      const m = out.msg;
      m.rcode = a.rcode;
      m.aa = true;
      m.answer = a.answer;
      m.authority = a.authority;
      m.additional = a.additional;
      out.stable = true;
      out.plugin = s.name;
      return LaneResult.answered;
    },
  };
}
