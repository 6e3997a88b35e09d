// dnssec [ZONES...] {
//     key file KEY...
//     cache_capacity CAPACITY
// }

import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, onceEach, parseIntArg, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { readKeyPair, KeyFileError, type SigningKey } from "../../dnssec/keys.ts";
import { dnssec } from "./dnssec.ts";
import { DEFAULT_CAPACITY, Signatures } from "./signatures.ts";
import { forgetCache, watchCache } from "./metrics.ts";

/** The blocks that have a dnssec line already. */
const seen = new WeakSet<object>();

export const setup: Setup = (d, ctx) => {
  // CoreDNS keeps the last line of a block; a line that would be lost is refused instead.
  if (seen.has(ctx.block))
    throw configError(d, "dnssec", "given twice in this server block: merge the lines");
  seen.add(ctx.block);
  const zones = zonesArg(d.args, ctx.zones, "dnssec").sort((a, b) => b.length - a.length);
  const keys: SigningKey[] = [];
  let capacity = DEFAULT_CAPACITY;
  const once = onceEach("dnssec");
  blockOptions(d, "dnssec", {
    key(opt) {
      argCount(opt, "dnssec", 2, Infinity);
      const how = opt.args[0].text;
      if (how === "secret" || how === "aws_secretsmanager")
        throw configError(
          opt.args[0],
          "dnssec",
          `'key ${how}' reads keys from AWS Secrets Manager, which this server does not reach: put the key files on disk and use 'key file'`,
        );
      if (how !== "file")
        throw configError(opt.args[0], "dnssec", `unknown key source '${how}': use 'key file'`);
      for (const t of opt.args.slice(1)) {
        try {
          keys.push(readKeyPair(resolve(ctx.root, t.text)));
        } catch (err) {
          if (err instanceof KeyFileError) throw configError(t, "dnssec", err.message);
          throw err;
        }
      }
    },
    cache_capacity(opt) {
      once(opt);
      argCount(opt, "dnssec", 1, 1);
      capacity = parseIntArg(opt.args[0], "dnssec", 0, 10_000_000);
    },
  });
  if (keys.length === 0) throw configError(d, "dnssec", "no keys: give them with 'key file KEY...'");
  const signatures = new Signatures(capacity);
  let server = "";
  watchCache(
    signatures,
    () => server,
    () => signatures.size,
  );
  ctx.onShutdown(() => forgetCache(signatures));
  return dnssec({ zones, keys, signatures, served: (s) => (server = s) });
};
