// loadbalance [round_robin | weighted WEIGHTFILE] {
//     reload DURATION
//     prefer CIDR...
//     limit_answers NUM_ANSWERS
// }

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import type { LoadbalanceOptions } from "./loadbalance.ts";
import { loadbalance } from "./loadbalance.ts";
import { WeightsFile, parseWeights } from "./weights.ts";
import { argCount, blockOptions, noBlock, parseIntArg, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { NetSet } from "../../dns/nets.ts";
import { fileStampSync } from "../file/file.ts";

/** CoreDNS's default: check the weights file every 30 seconds. */
const DEFAULT_RELOAD_MS = 30_000;

export const setup: Setup = (d, ctx) => {
  argCount(d, "loadbalance", 0, 2);
  const policy = d.args[0]?.text ?? "round_robin";
  if (policy !== "round_robin" && policy !== "weighted") {
    throw configError(d.args[0], "loadbalance", `unknown policy '${policy}' (want round_robin or weighted)`);
  }
  if (policy === "round_robin" && d.args.length > 1) {
    throw configError(d.args[1], "loadbalance", "round_robin takes no file");
  }
  if (policy === "weighted" && d.args.length < 2) {
    throw configError(d.args[0], "loadbalance", "weighted needs the weights file: weighted WEIGHTFILE");
  }
  const o: LoadbalanceOptions = {};
  let reloadMs: number | undefined;
  const prefer: NetSet[] = [];
  blockOptions(d, "loadbalance", {
    limit_answers(opt) {
      noBlock(opt, "loadbalance");
      argCount(opt, "loadbalance", 1, 1);
      o.limitAnswers = parseIntArg(opt.args[0], "loadbalance", 1, 65535);
    },
    reload(opt) {
      noBlock(opt, "loadbalance");
      if (policy !== "weighted")
        throw configError(opt, "loadbalance", "'reload' applies to the weighted policy only");
      argCount(opt, "loadbalance", 1, 1);
      reloadMs = parseTimerDuration(opt.args[0], "loadbalance");
    },
    prefer(opt) {
      noBlock(opt, "loadbalance");
      argCount(opt, "loadbalance", 1, Infinity);
      for (const t of opt.args) {
        const nets = new NetSet();
        const why = nets.add(t.text);
        if (why !== undefined) throw configError(t, "loadbalance", why);
        prefer.push(nets);
      }
    },
  });
  if (prefer.length > 0) o.prefer = prefer;
  if (policy === "weighted") {
    const file = d.args[1];
    const path = resolve(ctx.root, file.text);
    const stamp = fileStampSync(path);
    let weights;
    try {
      weights = parseWeights(readFileSync(path, "utf8"), path);
    } catch (err) {
      throw configError(file, "loadbalance", (err as Error).message);
    }
    const watched = new WeightsFile(path, weights, stamp, ctx.log("loadbalance"));
    o.weights = () => watched.current;
    const interval = reloadMs ?? DEFAULT_RELOAD_MS;
    if (interval > 0) {
      ctx.onStartup(() => watched.start(interval));
      ctx.onShutdown(() => watched.stop());
    }
  }
  return loadbalance(o);
};
