// cancel [TIMEOUT]

import type { Setup } from "../../setup/registry.ts";
import { argCount, noBlock, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { cancel, DEFAULT_TIMEOUT_MS } from "./cancel.ts";

export const setup: Setup = (d, ctx) => {
  argCount(d, "cancel", 0, 1);
  noBlock(d, "cancel");
  let ms = DEFAULT_TIMEOUT_MS;
  if (d.args.length === 1) {
    ms = parseTimerDuration(d.args[0], "cancel");
    if (ms <= 0)
      throw configError(d.args[0], "cancel", `the timeout must be above zero, got '${d.args[0].text}'`);
  }
  return cancel(ms, ctx.log("cancel"));
};
