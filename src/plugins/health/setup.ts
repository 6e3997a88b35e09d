// health [ADDRESS] {
//     lameduck DURATION
// }

import type { Setup } from "../../setup/registry.ts";
import { listenArgument, serveWhileRunning } from "../../http/listener.ts";
import { HEALTH_PATH, healthRoute } from "./health.ts";
import { argCount, blockOptions, parseDuration } from "../../corefile/args.ts";

export const DEFAULT_HEALTH_ADDRESS = ":8080";

export const setup: Setup = (d, ctx) => {
  const listen = listenArgument(d, DEFAULT_HEALTH_ADDRESS);
  let lameduckMs = 0;
  blockOptions(d, "health", {
    lameduck: (opt) => {
      argCount(opt, "health", 1, 1);
      lameduckMs = parseDuration(opt.args[0], "health");
    },
  });
  // One instance-wide delay: the longest asked for.
  ctx.instance.lameduckMs = Math.max(ctx.instance.lameduckMs, lameduckMs);

  serveWhileRunning(ctx, listen, HEALTH_PATH, healthRoute);
  return undefined;
};
