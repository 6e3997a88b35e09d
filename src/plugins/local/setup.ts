// local {
//     localhost_prefix on|off
// }

import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, onceEach } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { local, type LocalOptions } from "./local.ts";

export const setup: Setup = (d) => {
  argCount(d, "local", 0, 0);
  const o: LocalOptions = { prefix: true };
  const once = onceEach("local");
  blockOptions(d, "local", {
    localhost_prefix(opt) {
      once(opt);
      argCount(opt, "local", 1, 1);
      const v = opt.args[0].text;
      if (v !== "on" && v !== "off") {
        throw configError(opt.args[0], "local", `localhost_prefix takes 'on' or 'off', got '${v}'`);
      }
      o.prefix = v === "on";
    },
  });
  return local(o);
};
