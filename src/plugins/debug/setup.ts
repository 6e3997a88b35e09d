// debug: no recovery from a plugin's unexpected exception in this block (src/runtime/panic.ts), and the
// process's log level at debug while the configuration has it in any block (src/server/instance.ts).

import type { Setup } from "../../setup/registry.ts";
import { argCount, noBlock } from "../../corefile/args.ts";

export const setup: Setup = (d, ctx) => {
  argCount(d, "debug", 0, 0);
  noBlock(d, "debug");
  ctx.block.debug = true;
  return undefined;
};
