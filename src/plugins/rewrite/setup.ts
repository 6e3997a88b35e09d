// rewrite [continue|stop] FIELD ARGS...
// rewrite [continue|stop] {
//     FIELD ARGS...
//     [answer ...]
// }
// The lines of a block are read as one rule, as CoreDNS does (`name regex ...` then `answer name ...`).
// All rewrite directives of a server block make one handler with their rules in Corefile order.

import { joinInBlock, type Setup } from "../../setup/registry.ts";
import type { Token } from "../../corefile/types.ts";
import type { Rule } from "./rules.ts";
import { parseRule } from "./rules.ts";
import { rewrite } from "./rewrite.ts";
import { configError } from "../../corefile/errors.ts";

/** The rule list of each server block that has rewrite directives (keyed by the block's settings). */
const lists = new WeakMap<object, Rule[]>();

export const setup: Setup = (d, ctx) => {
  let words: Token[] = d.args;
  if (d.block) {
    if (d.args.length > 1 || (d.args.length === 1 && !["continue", "stop"].includes(d.args[0].text))) {
      throw configError(d, "rewrite", "with a block, the directive takes only continue or stop");
    }
    if (d.block.length === 0) throw configError(d, "rewrite", "empty block");
    words = [...d.args];
    for (const line of d.block) {
      if (line.block) throw configError(line, "rewrite", `'${line.name}' takes no block`);
      words.push({ text: line.name, file: line.file, line: line.line, quoted: false }, ...line.args);
    }
  }
  return joinInBlock(lists, ctx.block, parseRule(words, d), (rules) => rewrite(rules, ctx.lookup));
};
