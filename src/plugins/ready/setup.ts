// ready [ADDRESS] {
//     monitor until-ready|continuously
// }

import type { Setup } from "../../setup/registry.ts";
import type { Monitor } from "./ready.ts";
import { listenArgument, serveWhileRunning } from "../../http/listener.ts";
import { READY_PATH, readyRoute } from "./ready.ts";
import { argCount, blockOptions } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

export const DEFAULT_READY_ADDRESS = ":8181";

export const setup: Setup = (d, ctx) => {
  const listen = listenArgument(d, DEFAULT_READY_ADDRESS);
  let monitor: Monitor = "until-ready";
  blockOptions(d, "ready", {
    monitor: (opt) => {
      argCount(opt, "ready", 1, 1);
      const v = opt.args[0].text;
      if (v !== "until-ready" && v !== "continuously") {
        throw configError(opt.args[0], "ready", `unknown monitor '${v}' (want until-ready or continuously)`);
      }
      monitor = v;
    },
  });

  const route = readyRoute(ctx.instance, monitor);
  serveWhileRunning(ctx, listen, READY_PATH, route);
  return undefined;
};
