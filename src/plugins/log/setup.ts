// log [NAMES...] [FORMAT] {
//     class all|denial|error|success...
//     minDuration DURATION
// }

import type { Setup } from "../../setup/registry.ts";
import type { Token } from "../../corefile/types.ts";
import type { LogRule, ResponseClass } from "./log.ts";
import { queryLogger } from "./log.ts";
import { COMBINED_FORMAT, COMMON_FORMAT, FormatError, compileFormat } from "./format.ts";
import { argCount, blockOptions, parseDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical } from "../../dns/name.ts";
import { metadataOf } from "../metadata/labels.ts";

const CLASSES = new Set(["all", "denial", "error", "success"]);

/** The rules of every log directive of a block, in Corefile order: CoreDNS merges them into one
 * logger, where the first rule whose name matches decides. */
const blockRules = new WeakMap<object, LogRule[]>();

export const setup: Setup = (d, ctx) => {
  let names = d.args;
  let format = COMMON_FORMAT;
  const last = d.args.at(-1);
  if (last && last.text.includes("{")) {
    names = d.args.slice(0, -1);
    format =
      last.text === "{common}" ? COMMON_FORMAT : last.text === "{combined}" ? COMBINED_FORMAT : last.text;
  }
  let compiled: LogRule["format"];
  const metadata = metadataOf(ctx.block.shared);
  if (metadata === undefined && format.includes("{/")) {
    const at = last ?? d;
    ctx
      .log("log")
      .warn(
        { at: `${at.file}:${at.line}` },
        "the block has no metadata directive: every {/LABEL} placeholder is logged as '-'",
      );
  }
  try {
    compiled = compileFormat(format, metadata && ((label) => metadata.label(label)));
  } catch (err) {
    if (err instanceof FormatError) throw configError(last ?? d, "log", err.message);
    throw err;
  }

  let classes: Set<ResponseClass> | undefined = new Set();
  let all = false;
  let minDuration: number | undefined;
  blockOptions(d, "log", {
    class: (opt) => {
      argCount(opt, "log", 1, Infinity);
      for (const t of opt.args) {
        if (!CLASSES.has(t.text))
          throw configError(t, "log", `unknown class '${t.text}' (want all, denial, error or success)`);
        if (t.text === "all") all = true;
        else classes!.add(t.text as ResponseClass);
      }
    },
    minDuration: (opt) => {
      argCount(opt, "log", 1, 1);
      minDuration = parseDuration(opt.args[0], "log") / 1000;
    },
  });
  if (all || classes.size === 0) classes = undefined;

  let rules = blockRules.get(ctx.block);
  if (!rules) {
    rules = [];
    blockRules.set(ctx.block, rules);
    ctx.onQueryDone(queryLogger(rules, ctx.log("log")));
  }
  for (const name of names.length > 0 ? nameArgs(names) : ["."]) {
    rules.push({ name, format: compiled, classes, minDuration });
  }
  return undefined;
};

/** NAMES: any domain names, canonical; they need not be zones of the block. */
function nameArgs(tokens: Token[]): string[] {
  return tokens.map((t) => {
    const n = canonical(t.text);
    if (!/^[a-z0-9_.-]+$/.test(n)) throw configError(t, "log", `invalid name '${t.text}'`);
    return n;
  });
}
