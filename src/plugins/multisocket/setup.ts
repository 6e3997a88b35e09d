// multisocket [NUM_SOCKETS]: as in CoreDNS, how many sockets answer on the block's port, one per
// thread here: the process runs that many answering threads (-workers, src/server/workers.ts), each
// with a socket of its own on every DNS port. Without a number: the cgroup's CPU quota (CoreDNS:
// GOMAXPROCS, which follows it). The threads are the process's, so the largest count in the Corefile
// is the one that runs; -workers on the command line wins over all of them.

import type { Setup } from "../../setup/registry.ts";
import type { ServerBlock } from "../../corefile/types.ts";
import { argCount, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { MAX_WORKERS } from "../../cli-flags.ts";

const NAME = "multisocket";

export const setup: Setup = (d) => {
  argCount(d, NAME, 0, 1);
  noBlock(d, NAME);
  const arg = d.args[0];
  if (arg !== undefined && parseCount(arg.text) === undefined) {
    throw configError(arg, NAME, `'${arg.text}' is not a number of sockets from 1 to ${MAX_WORKERS}`);
  }
  return undefined;
};

function parseCount(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= MAX_WORKERS ? n : undefined;
}

/** The threads the Corefile's multisocket lines ask for: the largest count, "auto" for a line without
 * one (the CPU quota), undefined when there is none. Set-up has checked the lines. */
export function multisocketWorkers(blocks: readonly ServerBlock[]): number | "auto" | undefined {
  let most: number | "auto" | undefined;
  for (const b of blocks) {
    for (const d of b.directives) {
      if (d.name !== NAME) continue;
      const n = d.args[0] === undefined ? "auto" : (parseCount(d.args[0].text) ?? 1);
      if (most === undefined || n === "auto" || (most !== "auto" && n > most)) most = n;
    }
  }
  return most;
}
