// health [ADDRESS] {
//     lameduck DURATION
// }

import type { Setup } from "../../plugin.ts";
import { parseListenAddress, serveWhileRunning } from "../../http/listener.ts";
import { HEALTH_PATH, healthRoute } from "./health.ts";
import { argCount, blockOptions, parseDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

export const DEFAULT_HEALTH_ADDRESS = ":8080";

export const setup: Setup = (d, ctx) => {
  argCount(d, "health", 0, 1);
  const at = d.args[0] ?? d;
  const addr = parseListenAddress(d.args[0]?.text ?? DEFAULT_HEALTH_ADDRESS);
  if (typeof addr === "string") throw configError(at, "health", addr);
  let lameduckMs = 0;
  blockOptions(d, "health", {
    lameduck: (opt) => {
      argCount(opt, "health", 1, 1);
      lameduckMs = parseDuration(opt.args[0], "health");
    },
  });
  // One instance-wide delay: the longest asked for.
  ctx.instance.lameduckMs = Math.max(ctx.instance.lameduckMs, lameduckMs);

  serveWhileRunning(ctx, at, "health", addr, HEALTH_PATH, healthRoute);
  return undefined;
};
