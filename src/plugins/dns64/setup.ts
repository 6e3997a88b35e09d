// dns64 [PREFIX] {
//     prefix PREFIX
//     translate_all
//     allow_ipv4
// }

import { isIPv4, isIPv6 } from "node:net";
import type { Setup } from "../../setup/registry.ts";
import type { Token } from "../../corefile/types.ts";
import { argCount, blockOptions, onceEach } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { dns64, type Dns64Options } from "./dns64.ts";
import { WELL_KNOWN_PREFIX, parsePrefix, type Pref64 } from "./prefix.ts";

/** The blocks that have a dns64 line already. */
const seen = new WeakSet<object>();

export const setup: Setup = (d, ctx) => {
  argCount(d, "dns64", 0, 1);
  // CoreDNS keeps the last line's settings; a line that would be lost is refused instead.
  if (seen.has(ctx.block)) throw configError(d, "dns64", "given twice in this server block: merge the lines");
  seen.add(ctx.block);
  let prefix = d.args.length === 1 ? prefixArg(d.args[0]) : undefined;
  let translateAll = false;
  let allowIpv4 = false;
  const once = onceEach("dns64");
  blockOptions(d, "dns64", {
    prefix(opt) {
      once(opt);
      argCount(opt, "dns64", 1, 1);
      const p = prefixArg(opt.args[0]);
      if (prefix !== undefined && prefix.text !== p.text) {
        throw configError(
          opt,
          "dns64",
          `the prefix is ${prefix.text} on the line and ${p.text} here: give one`,
        );
      }
      prefix = p;
    },
    translate_all(opt) {
      once(opt);
      argCount(opt, "dns64", 0, 0);
      translateAll = true;
    },
    allow_ipv4(opt) {
      once(opt);
      argCount(opt, "dns64", 0, 0);
      allowIpv4 = true;
    },
  });
  const bind = ctx.block.bind;
  const families = {
    v4: bind.length === 0 || bind.some((a) => isIPv4(a)),
    v6: bind.length === 0 || bind.some((a) => isIPv6(a)),
  };
  if (!allowIpv4 && !families.v6) {
    ctx
      .log("dns64")
      .warn(
        { at: `${d.file}:${d.line}` },
        "this block listens on IPv4 only and dns64 translates for IPv6 clients only: add allow_ipv4, or bind an IPv6 address",
      );
  }
  // The reply then depends on the client's family: the store keys the families' AAAA apart.
  if (!allowIpv4 && families.v4 && families.v6) ctx.block.familyKeys = true;
  const o: Dns64Options = {
    prefix: prefix ?? (parsePrefix(WELL_KNOWN_PREFIX) as Pref64),
    translateAll,
    allowIpv4,
    families,
  };
  return dns64(o);
};

function prefixArg(t: Token): Pref64 {
  const p = parsePrefix(t.text);
  if (typeof p === "string") throw configError(t, "dns64", p);
  return p;
}
