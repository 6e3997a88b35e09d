// erratic [{ drop [AMOUNT]; truncate [AMOUNT]; delay [AMOUNT [DURATION]]; large }]

import type { Setup } from "../../setup/registry.ts";
import type { Directive } from "../../corefile/types.ts";
import { argCount, blockOptions, parseIntArg, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { Erratic, type ErraticOptions } from "./erratic.ts";

const NAME = "erratic";
/** CoreDNS reads AMOUNT as a 32-bit integer. */
const MAX_AMOUNT = 2 ** 31 - 1;

export function parseErratic(d: Directive): ErraticOptions {
  argCount(d, NAME, 0, 0);
  // Alone, erratic drops every second query; naming only truncate or delay turns that off.
  const o: ErraticOptions = { drop: 2, truncate: 0, delay: 0, delayMs: 100, large: false };
  let dropNamed = false;
  const amount = (opt: Directive): number =>
    opt.args.length === 0 ? 2 : parseIntArg(opt.args[0], NAME, 0, MAX_AMOUNT);
  blockOptions(d, NAME, {
    drop: (opt) => {
      argCount(opt, NAME, 0, 1);
      o.drop = amount(opt);
      dropNamed = true;
    },
    truncate: (opt) => {
      argCount(opt, NAME, 0, 1);
      o.truncate = amount(opt);
    },
    delay: (opt) => {
      argCount(opt, NAME, 0, 2);
      o.delay = amount(opt);
      o.delayMs = 100;
      if (opt.args.length === 2) {
        o.delayMs = parseTimerDuration(opt.args[1], NAME);
        if (o.delayMs < 0) throw configError(opt.args[1], NAME, "the delay cannot be negative");
      }
    },
    large: (opt) => {
      argCount(opt, NAME, 0, 0);
      o.large = true;
    },
  });
  if (!dropNamed && (o.truncate > 0 || o.delay > 0)) o.drop = 0;
  return o;
}

export const setup: Setup = (d, ctx) => {
  const erratic = new Erratic(parseErratic(d));
  // Ready at once, as CoreDNS's erratic reports itself.
  ctx.registerReady(NAME, () => true);
  return () => erratic.handler();
};
