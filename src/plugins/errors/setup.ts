// errors [stdout] {
//     consolidate DURATION REGEXP [LEVEL] [show_first]
//     stacktrace | panicRecoveryStacktrace
// }

import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { ConsolidateLevel, Pattern } from "./consolidate.ts";
import { Consolidator } from "./consolidate.ts";
import { errors } from "./errors.ts";
import { argCount, blockOptions, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

const LEVELS: Record<string, ConsolidateLevel> = {
  warning: "warn",
  error: "error",
  info: "info",
  debug: "debug",
};

export const setup: Setup = (d, ctx) => {
  argCount(d, "errors", 0, 1);
  // CoreDNS accepts "stdout" as the only log destination; clusterdns always logs through pino.
  if (d.args.length === 1 && d.args[0].text !== "stdout") {
    throw configError(d.args[0], "errors", `invalid log file '${d.args[0].text}' (only 'stdout')`);
  }
  const patterns: Pattern[] = [];
  let stacktrace = false;
  const trace = (opt: Directive): void => {
    argCount(opt, "errors", 0, 0);
    stacktrace = true;
  };
  blockOptions(d, "errors", {
    consolidate: (opt) => patterns.push(parseConsolidate(opt)),
    stacktrace: trace,
    panicRecoveryStacktrace: trace,
  });
  const log = ctx.log("errors");
  const consolidator = new Consolidator(patterns, log);
  ctx.onShutdown(() => consolidator.stop());
  return errors({ consolidator, stacktrace, log, debug: ctx.block.debug });
};

function parseConsolidate(opt: Directive): Pattern {
  argCount(opt, "errors", 2, 4);
  const [period, expr, ...rest] = opt.args;
  const periodMs = parseTimerDuration(period, "errors");
  if (periodMs <= 0)
    throw configError(period, "errors", `consolidate period must be positive, got '${period.text}'`);
  let re: RegExp;
  try {
    re = goRegExp(expr.text);
  } catch (err) {
    throw configError(expr, "errors", `invalid regular expression '${expr.text}': ${(err as Error).message}`);
  }
  return { periodMs, re, source: expr.text, ...levelAndShowFirst(rest) };
}

/** consolidate's optional [LEVEL] [show_first], in that order, as CoreDNS 1.14 takes them. */
function levelAndShowFirst(args: readonly Token[]): Pick<Pattern, "level" | "showFirst"> {
  let level: ConsolidateLevel | undefined;
  let showFirst = false;
  for (const a of args) {
    if (a.text === "show_first") showFirst = true;
    else if (!Object.hasOwn(LEVELS, a.text))
      throw configError(a, "errors", `unknown log level '${a.text}' (want warning, error, info or debug)`);
    else if (level !== undefined)
      throw configError(a, "errors", "multiple log levels specified in consolidate");
    else if (showFirst)
      throw configError(a, "errors", "log level must come before show_first in consolidate");
    else level = LEVELS[a.text];
  }
  return { level: level ?? "error", showFirst };
}

/** A Go (RE2) expression as a RegExp: a leading flag group such as `(?i)` becomes RegExp flags. */
function goRegExp(text: string): RegExp {
  const m = /^\(\?([ims]+)\)/.exec(text);
  return m ? new RegExp(text.slice(m[0].length), m[1]) : new RegExp(text);
}
