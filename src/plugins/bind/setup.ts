// bind ADDRESS|IFACE ... {
//     except ADDRESS|IFACE ...
// }

import { networkInterfaces } from "node:os";
import type { Setup } from "../../setup/registry.ts";
import type { Token } from "../../corefile/types.ts";
import type { Interfaces } from "./bind.ts";
import { resolveBind } from "./bind.ts";
import { argCount, blockOptions } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

export const setup: Setup = (d, ctx) => {
  argCount(d, "bind", 1, Infinity);
  const interfaces = networkInterfaces();
  const wanted = expand(d.args, interfaces);
  const excluded = new Set<string>();
  blockOptions(d, "bind", {
    except: (opt) => {
      argCount(opt, "bind", 1, Infinity);
      for (const a of expand(opt.args, interfaces)) excluded.add(a);
    },
  });
  const kept = wanted.filter((a) => !excluded.has(a));
  if (kept.length === 0) throw configError(d, "bind", "no address left to listen on after 'except'");
  // Several bind lines in a block add up (CoreDNS consolidates them).
  for (const a of kept) if (!ctx.block.bind.includes(a)) ctx.block.bind.push(a);
  return undefined;
};

function expand(tokens: Token[], interfaces: Interfaces): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    const r = resolveBind(t.text, interfaces);
    if (typeof r === "string") throw configError(t, "bind", r);
    for (const a of r) if (!out.includes(a)) out.push(a);
  }
  return out;
}
