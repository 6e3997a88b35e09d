// rrl [ZONES...] {
//     window SECONDS
//     ipv4-prefix-length LENGTH
//     ipv6-prefix-length LENGTH
//     responses-per-second ALLOWANCE
//     nodata-per-second ALLOWANCE
//     nxdomains-per-second ALLOWANCE
//     referrals-per-second ALLOWANCE
//     errors-per-second ALLOWANCE
//     slip-ratio N
//     max-table-size SIZE
//     report-only
// }
// The syntax of the coredns/rrl plugin (after BIND's rate-limit). A setting of the block, not a
// handler: the pipeline passes every UDP reply of the block through the limiter (limiter.ts), the
// ones the answer cache replays too. Its accounts are one table every answering thread charges
// (shared-accounts.ts).

import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, noBlock, parseIntArg, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import type { Directive } from "../../corefile/types.ts";
import { isSubdomain } from "../../dns/name.ts";
import { ResponseLimiter, type RrlOptions } from "./limiter.ts";
import { accountTable } from "./shared-accounts.ts";
import "./metrics.ts";

const NAME = "rrl";
const MAX_ALLOWANCE = 1_000_000;

export function parseRrl(d: Directive, blockZones: readonly string[]): RrlOptions {
  const zones = zonesArg(d.args, blockZones, NAME);
  const o: RrlOptions = {
    zones: zones.every((z) => blockZones.includes(z)) && zones.length === blockZones.length ? [] : zones,
    windowS: 15,
    v4Bits: 24,
    v6Bits: 56,
    responses: 0,
    nodata: -1,
    nxdomains: -1,
    referrals: -1,
    errors: -1,
    slip: 2,
    maxTable: 100_000,
    reportOnly: false,
  };
  const one = (opt: Directive) => {
    argCount(opt, NAME, 1, 1);
    noBlock(opt, NAME);
    return opt.args[0];
  };
  const int = (min: number, max: number) => (opt: Directive) => parseIntArg(one(opt), NAME, min, max);
  const allowance =
    (key: "responses" | "nodata" | "nxdomains" | "referrals" | "errors") => (opt: Directive) => {
      o[key] = int(0, MAX_ALLOWANCE)(opt);
    };
  blockOptions(d, NAME, {
    window: (opt) => (o.windowS = int(1, 3600)(opt)),
    "ipv4-prefix-length": (opt) => (o.v4Bits = int(0, 32)(opt)),
    "ipv6-prefix-length": (opt) => (o.v6Bits = int(0, 128)(opt)),
    "responses-per-second": allowance("responses"),
    "nodata-per-second": allowance("nodata"),
    "nxdomains-per-second": allowance("nxdomains"),
    "referrals-per-second": allowance("referrals"),
    "errors-per-second": allowance("errors"),
    "slip-ratio": (opt) => (o.slip = int(0, 10)(opt)),
    "max-table-size": (opt) => (o.maxTable = int(1, 10_000_000)(opt)),
    "report-only": (opt) => {
      argCount(opt, NAME, 0, 0);
      o.reportOnly = true;
    },
    "requests-per-second": (opt) => {
      throw configError(opt, NAME, "requests-per-second is not supported: clusterdns limits responses only");
    },
  });
  // The other categories default to responses-per-second, as in BIND.
  for (const k of ["nodata", "nxdomains", "referrals", "errors"] as const) if (o[k] < 0) o[k] = o.responses;
  return o;
}

export const setup: Setup = async (d, ctx) => {
  if (ctx.block.rrl !== undefined) throw configError(d, NAME, "one rrl per server block");
  const o = parseRrl(d, ctx.zones);
  const limits = [o.responses, o.nodata, o.nxdomains, o.referrals, o.errors];
  if (limits.every((n) => n === 0)) {
    ctx.log(NAME).warn({ at: `${d.file}:${d.line}` }, "every allowance is 0: nothing is limited");
    return undefined;
  }
  const table = await accountTable(ctx, o);
  const inZones = (qname: string) => o.zones.some((z) => isSubdomain(qname, z));
  ctx.block.rrl = new ResponseLimiter(o, { inZones, table });
  return undefined;
};
