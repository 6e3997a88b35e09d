// on EVENT COMMAND [ARGS...] [&]

import type { Setup } from "../../setup/registry.ts";
import type { Logger } from "pino";
import { argCount, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { run, type Command } from "./run.ts";
import { SplitError, splitWords } from "./split.ts";

const NAME = "on";
/** coredns/caddy's events: certrenew is accepted there and never emitted by CoreDNS. */
const EVENTS = new Set(["startup", "shutdown", "certrenew"]);

/** The process's start-up commands, one after another in Corefile order: a command waits for the one
 * before it unless that one runs in the background. */
let startupQueue: Promise<void> = Promise.resolve();

export const setup: Setup = (d, ctx) => {
  argCount(d, NAME, 2, Infinity);
  noBlock(d, NAME);
  const event = d.args[0].text.toLowerCase();
  if (!EVENTS.has(event)) {
    throw configError(d.args[0], NAME, `unknown event '${d.args[0].text}' (want startup or shutdown)`);
  }
  let words: string[];
  try {
    words = splitWords(
      d.args
        .slice(1)
        .map((t) => t.text)
        .join(" "),
    );
  } catch (err) {
    if (!(err instanceof SplitError)) throw err;
    throw configError(d.args[1], NAME, `error parsing command: ${err.message}`);
  }
  const background = words.at(-1) === "&";
  if (background) words.pop();
  if (words.length === 0) throw configError(d.args[1], NAME, "no command to run");
  const log = ctx.log(NAME);
  const at = `${d.file}:${d.line}`;
  const command: Command = { event, program: words[0], args: words.slice(1), background, at };
  if (event === "certrenew") {
    log.warn(
      { at },
      "'certrenew' never happens here (clusterdns renews no certificate): this command never runs",
    );
    return undefined;
  }
  // The process runs its commands once: worker threads set the same Corefile up, and run none.
  if (inWorker()) return undefined;
  if (event === "startup") {
    ctx.onServing(() => {
      startupQueue = startupQueue.then(() => start(command, log));
    });
  } else {
    ctx.onStopping(() => start(command, log));
  }
  return undefined;
};

/** Runs a command; resolves when the next one may start. */
function start(c: Command, log: Logger): Promise<void> {
  const done = run(c, log);
  return c.background ? Promise.resolve() : done;
}
