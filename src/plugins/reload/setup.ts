// reload [INTERVAL [JITTER]]: the Corefile is checked every INTERVAL +- JITTER and, when its content
// changed and it sets up cleanly, swapped in without dropping a query (src/server/reloader.ts).

import type { Setup } from "../../setup/registry.ts";
import { argCount, noBlock, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

const NAME = "reload";
const DEFAULT_INTERVAL_MS = 30_000;
const DEFAULT_JITTER_MS = 15_000;
const MIN_INTERVAL_MS = 2_000;
const MIN_JITTER_MS = 1_000;

export const setup: Setup = (d, ctx) => {
  argCount(d, NAME, 0, 2);
  noBlock(d, NAME);
  const intervalMs = d.args[0] ? parseTimerDuration(d.args[0], NAME) : DEFAULT_INTERVAL_MS;
  let jitterMs = d.args[1] ? parseTimerDuration(d.args[1], NAME) : DEFAULT_JITTER_MS;
  if (intervalMs < MIN_INTERVAL_MS) throw configError(d.args[0], NAME, "interval must be at least 2s");
  // As in CoreDNS: 0 is no jitter.
  if (jitterMs !== 0 && jitterMs < MIN_JITTER_MS)
    throw configError(d.args[1], NAME, "jitter must be 0 or at least 1s");
  // As in CoreDNS: a jitter over half the interval is cut to half of it.
  jitterMs = Math.min(jitterMs, intervalMs / 2);
  const at = `${d.file}:${d.line}`;
  // The Corefile has one interval: CoreDNS takes the last `reload` line's, whichever block it is in.
  const prev = ctx.instance.reload;
  if (prev && (prev.intervalMs !== intervalMs || prev.jitterMs !== jitterMs)) {
    ctx
      .log(NAME)
      .warn(
        { at, before: prev.at },
        "set again with other values: these apply, one interval for the whole Corefile (CoreDNS takes the last too)",
      );
  }
  ctx.instance.reload = { intervalMs, jitterMs, at };
  return undefined;
};
