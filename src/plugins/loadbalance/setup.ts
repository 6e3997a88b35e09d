// loadbalance [round_robin] {
//     limit_answers NUM_ANSWERS
// }
// The weighted policy (and its reload option) is not implemented: a clear start-up error.

import type { Setup } from "../../plugin.ts";
import type { LoadbalanceOptions } from "./loadbalance.ts";
import { loadbalance } from "./loadbalance.ts";
import { argCount, blockOptions, noBlock, parseIntArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

export const setup: Setup = (d) => {
  argCount(d, "loadbalance", 0, 2);
  const policy = d.args[0];
  if (policy?.text === "weighted") {
    throw configError(policy, "loadbalance", "the 'weighted' policy is not supported; use 'round_robin'");
  }
  if (policy !== undefined && policy.text !== "round_robin") {
    throw configError(policy, "loadbalance", `unknown policy '${policy.text}' (want round_robin)`);
  }
  if (d.args.length > 1) throw configError(d.args[1], "loadbalance", "round_robin takes no file");
  const o: LoadbalanceOptions = {};
  blockOptions(d, "loadbalance", {
    limit_answers(opt) {
      noBlock(opt, "loadbalance");
      argCount(opt, "loadbalance", 1, 1);
      o.limitAnswers = parseIntArg(opt.args[0], "loadbalance", 1, 65535);
    },
    reload(opt) {
      throw configError(opt, "loadbalance", "'reload' applies to the weighted policy only");
    },
  });
  return loadbalance(o);
};
