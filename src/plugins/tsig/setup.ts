// `tsig [ZONE...] { secret NAME KEY; secrets FILE; require [QTYPE...|all|none] }`: TSIG keys (RFC 8945)
// for the block, as CoreDNS's tsig plugin: signed queries are checked and their replies signed (also a
// transfer's every message, and NOTIFY), and `require` refuses unsigned queries of the types named.

import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, noBlock, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical } from "../../dns/name.ts";
import { typeFromName } from "../../dns/constants.ts";
import { decodeSecret, readSecretsFile } from "./secrets.ts";
import { tsigPlugin } from "./tsig.ts";

const NAME = "tsig";

export const setup: Setup = (d, ctx) => {
  const zones = zonesArg(d.args, ctx.zones, NAME);
  const secrets = new Map<string, Buffer>();
  let require: Set<number> | "all" = new Set();
  const add = (at: (typeof d.args)[number], name: string, secret: Buffer) => {
    if (secrets.has(name)) throw configError(at, NAME, `key '${name}' is defined twice`);
    secrets.set(name, secret);
  };
  blockOptions(d, NAME, {
    secret(opt) {
      noBlock(opt, NAME);
      argCount(opt, NAME, 2, 2);
      const secret = decodeSecret(opt.args[1].text);
      if (typeof secret === "string")
        throw configError(opt.args[1], NAME, `secret ${opt.args[0].text}: ${secret}`);
      add(opt.args[0], canonical(opt.args[0].text), secret);
    },
    secrets(opt) {
      noBlock(opt, NAME);
      argCount(opt, NAME, 1, 1);
      let file: Map<string, Buffer>;
      try {
        file = readSecretsFile(resolve(ctx.root, opt.args[0].text));
      } catch (err) {
        throw configError(opt.args[0], NAME, (err as Error).message);
      }
      for (const [name, secret] of file) add(opt.args[0], name, secret);
    },
    require(opt) {
      noBlock(opt, NAME);
      argCount(opt, NAME, 1, Infinity);
      const first = opt.args[0].text.toLowerCase();
      if (first === "all" || first === "none") {
        if (opt.args.length > 1)
          throw configError(opt, NAME, `'require ${first}' takes no query types after it`);
        require = first === "all" ? "all" : new Set();
        return;
      }
      require = new Set(
        opt.args.map((t) => {
          const qtype = typeFromName(t.text);
          if (qtype === undefined) throw configError(t, NAME, `unknown query type '${t.text}'`);
          return qtype;
        }),
      );
    },
  });
  // CoreDNS's secrets are the server's, whatever ZONE says; a block with tsig twice is refused there.
  if (ctx.block.tsig !== undefined) throw configError(d, NAME, "tsig is given twice in this server block");
  ctx.block.tsig = { secrets, zones };
  return tsigPlugin({ zones, require });
};
