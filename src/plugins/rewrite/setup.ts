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
import { metadataOf, type MetaLabel } from "../metadata/labels.ts";
import type { LabelOf } from "./edns0.ts";

const NO_VALUE: MetaLabel = { value: () => undefined, perClient: false };

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
  const metadata = metadataOf(ctx.block.shared);
  const labelOf: LabelOf = (label, t) => {
    if (metadata !== undefined) return metadata.label(label);
    ctx
      .log("rewrite")
      .warn(
        { at: `${t.file}:${t.line}` },
        `the block has no metadata directive: ${t.text} has no value, and the edns0 rule never applies`,
      );
    return NO_VALUE;
  };
  const rule = parseRule(words, d, labelOf);
  return joinInBlock(lists, ctx.block, rule, (rules) => rewrite(rules, ctx.lookup));
};
