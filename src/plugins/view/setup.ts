// view NAME {
//     expr EXPRESSION
// }
// The block answers only the queries every EXPRESSION holds true for; blocks of one zone and port
// are asked in Corefile order (src/server/instance.ts chains them), and the first that matches, or
// has no view, answers. NAME is published as the metadata label `view/name`.

import type { Setup } from "../../setup/registry.ts";
import type { ViewQuery } from "../../setup/block.ts";
import { argCount, blockOptions } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { metadataOf, type MetaLabel } from "../metadata/labels.ts";
import { compileExpr } from "./expr.ts";
import { ExprError } from "./expr-lexer.ts";

const NO_VALUE: MetaLabel = { value: () => undefined, perClient: false };

export const setup: Setup = (d, ctx) => {
  argCount(d, "view", 1, 1);
  const name = d.args[0].text;
  const metadata = metadataOf(ctx.block.shared);
  const labelOf = (label: string) => metadata?.label(label) ?? NO_VALUE;
  const tests: ((q: ViewQuery) => boolean)[] = [];
  blockOptions(d, "view", {
    expr: (opt) => {
      argCount(opt, "view", 1, Infinity);
      // As CoreDNS: the words of the line joined by one space.
      const src = opt.args.map((t) => t.text).join(" ");
      try {
        tests.push(compileExpr(src, labelOf));
      } catch (err) {
        if (err instanceof ExprError) throw configError(opt, "view", `expr '${src}': ${err.message}`);
        throw err;
      }
    },
  });
  // The view's name is the block's: a value of the question's view, the same for every client of it.
  const own: MetaLabel = { value: () => name, perClient: false };
  metadata?.provide({ label: (l) => (l === "view/name" ? own : undefined) });
  ctx.block.view = {
    name,
    matches(q) {
      for (let i = 0; i < tests.length; i++) if (!tests[i](q)) return false;
      return true;
    },
  };
  return undefined;
};
