// timeouts {
//     read DURATION
//     write DURATION
//     idle DURATION
// }
// A setting of the server block's TCP listener, not a handler (src/server/tcp-connection.ts applies
// them). CoreDNS's syntax; each between 1 s and 24 h, at least one given.

import type { Setup } from "../../setup/registry.ts";
import type { TcpTimeoutSettings } from "../../setup/block.ts";
import { argCount, blockOptions, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import type { Directive } from "../../corefile/types.ts";

const MIN_MS = 1000;
const MAX_MS = 24 * 3_600_000;

const KEYS = { read: "readMs", write: "writeMs", idle: "idleMs" } as const;

export const setup: Setup = (d, ctx) => {
  argCount(d, "timeouts", 0, 0);
  const set: TcpTimeoutSettings = {};
  const option = (name: keyof typeof KEYS) => (opt: Directive) => {
    argCount(opt, "timeouts", 1, 1);
    const ms = parseTimerDuration(opt.args[0], "timeouts");
    if (ms < MIN_MS || ms > MAX_MS) {
      throw configError(opt.args[0], "timeouts", `${name} ${opt.args[0].text} is not between 1s and 24h`);
    }
    set[KEYS[name]] = ms;
  };
  blockOptions(d, "timeouts", { read: option("read"), write: option("write"), idle: option("idle") });
  if (Object.keys(set).length === 0)
    throw configError(d, "timeouts", "give at least one of read, write, idle");
  ctx.block.timeouts = { ...ctx.block.timeouts, ...set };
  return undefined;
};
