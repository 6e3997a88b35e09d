// health [ADDRESS] {
//     lameduck DURATION
// }

import type { Setup } from "../../setup/registry.ts";
import { boundPort, listenArgument, serveWhileRunning } from "../../http/listener.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { startSelfCheck } from "./self-check.ts";
import { HEALTH_PATH, healthRoute } from "./health.ts";
import { argCount, blockOptions, parseTimerDuration } from "../../corefile/args.ts";

export const DEFAULT_HEALTH_ADDRESS = ":8080";

export const setup: Setup = (d, ctx) => {
  const listen = listenArgument(d, DEFAULT_HEALTH_ADDRESS);
  let lameduckMs = 0;
  blockOptions(d, "health", {
    lameduck: (opt) => {
      argCount(opt, "health", 1, 1);
      lameduckMs = parseTimerDuration(opt.args[0], "health");
    },
  });
  // One instance-wide delay: the longest asked for.
  ctx.instance.lameduckMs = Math.max(ctx.instance.lameduckMs, lameduckMs);

  serveWhileRunning(ctx, listen, HEALTH_PATH, healthRoute);
  if (!inWorker()) {
    const { addr } = listen;
    // A wildcard address is asked on loopback; port 0 (tests) on the port the system gave.
    const host =
      addr.host === undefined || addr.host === "0.0.0.0"
        ? "127.0.0.1"
        : addr.host === "::"
          ? "::1"
          : addr.host;
    let stop = () => {};
    ctx.onStartup(() => {
      stop = startSelfCheck(() => {
        const port = addr.port || boundPort(addr.text);
        return port ? { host, port } : undefined;
      }, ctx.log("health"));
    });
    // Registered after the listener: shutdown hooks run last first, so no request fails at the end.
    ctx.onShutdown(() => stop());
  }
  return undefined;
};
