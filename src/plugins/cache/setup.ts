// cache [TTL] [ZONES...] {
//     success CAPACITY [TTL] [MINTTL]
//     denial CAPACITY [TTL] [MINTTL]
//     prefetch AMOUNT [[DURATION] [PERCENTAGE%]]
//     serve_stale [DURATION] [REFRESH_MODE]
//     serve_stale_policy prefer_positive
//     servfail DURATION
//     disable success|denial [ZONES...]
//     keepttl
// }

import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import {
  argCount,
  blockOptions,
  noBlock,
  onceEach,
  parseDuration,
  parseIntArg,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { Cache, cachePlugin, type CacheOptions, type KindSettings } from "./cache.ts";
import "./metrics.ts";

const NAME = "cache";
const MAX_TTL = { success: 3600, denial: 1800 };
const MIN_TTL = 5;
/** CoreDNS's default: 256 shards of 39 entries. */
const CAPACITY = 9984;
const MAX_SERVFAIL_S = 300;
const INT32 = 2 ** 31 - 1;

export function parseCache(d: Directive, blockZones: readonly string[]): CacheOptions {
  let args = d.args;
  let maxTtl: number | undefined;
  // A number first is the TTL (a negative one too, to reject it), anything else a zone.
  if (args.length > 0 && /^-?\d+$/.test(args[0].text)) {
    maxTtl = parseIntArg(args[0], NAME, 1, INT32);
    args = args.slice(1);
  }
  const zones = zonesArg(args, blockZones, NAME);
  const o: CacheOptions = {
    zones,
    success: { capacity: CAPACITY, maxTtl: maxTtl ?? MAX_TTL.success, minTtl: MIN_TTL },
    denial: { capacity: CAPACITY, maxTtl: maxTtl ?? MAX_TTL.denial, minTtl: MIN_TTL },
    servfailTtl: 5,
    disable: { success: [], denial: [] },
    keepTtl: false,
  };
  const once = onceEach(NAME);
  /** The option once, without a block, with between min and max arguments. */
  const check = (opt: Directive, min: number, max: number) => {
    once(opt);
    argCount(opt, NAME, min, max);
    return opt;
  };
  let policyAt: Directive | undefined;
  blockOptions(d, NAME, {
    success: (opt) => kind(check(opt, 1, 3), o.success),
    denial: (opt) => kind(check(opt, 1, 3), o.denial),
    prefetch: (opt) => (o.prefetch = prefetch(check(opt, 1, 3))),
    serve_stale: (opt) => (o.serveStale = serveStale(check(opt, 0, 2))),
    serve_stale_policy: (opt) => (policyAt = serveStalePolicy(check(opt, 1, 1))),
    servfail: (opt) => (o.servfailTtl = servfail(check(opt, 1, 1))),
    disable: (opt) => disable(opt, o.disable, zones),
    keepttl: (opt) => {
      check(opt, 0, 0);
      o.keepTtl = true;
    },
  });
  if (policyAt !== undefined) {
    if (o.serveStale === undefined)
      throw configError(policyAt, NAME, "serve_stale_policy: needs serve_stale");
    o.serveStale = { ...o.serveStale, preferPositive: true };
  }
  return o;
}

/** success|denial CAPACITY [TTL] [MINTTL], into the kind's rules. */
function kind(opt: Directive, s: KindSettings): void {
  s.capacity = parseIntArg(opt.args[0], NAME, 1, INT32);
  if (opt.args[1]) s.maxTtl = parseIntArg(opt.args[1], NAME, 1, INT32);
  if (opt.args[2]) s.minTtl = parseIntArg(opt.args[2], NAME, 0, s.maxTtl);
}

/** prefetch AMOUNT [[DURATION] [PERCENTAGE%]] */
function prefetch(opt: Directive): CacheOptions["prefetch"] {
  const amount = parseIntArg(opt.args[0], NAME, 1, INT32);
  let durationMs = 60_000;
  let percentage = 10;
  for (const t of opt.args.slice(1)) {
    if (t.text.endsWith("%")) percentage = percent(t);
    else if (t === opt.args[1]) durationMs = positiveDuration(t);
    else throw configError(t, NAME, `prefetch: '${t.text}' is not a PERCENTAGE% (like 10%)`);
  }
  return { amount, durationMs, percentage };
}

/** serve_stale [DURATION] [REFRESH_MODE] */
function serveStale(opt: Directive): CacheOptions["serveStale"] {
  let durationMs = 3_600_000;
  if (opt.args[0]) {
    durationMs = parseDuration(opt.args[0], NAME);
    if (durationMs < 0) throw configError(opt.args[0], NAME, "serve_stale: the duration is negative");
  }
  const mode = opt.args[1]?.text ?? "immediate";
  if (mode !== "immediate" && mode !== "verify") {
    throw configError(
      opt.args[1],
      NAME,
      `serve_stale: unknown refresh mode '${mode}' (want immediate or verify)`,
    );
  }
  return { durationMs, verify: mode === "verify" };
}

/** serve_stale_policy prefer_positive: the option itself, checked against serve_stale once all are read. */
function serveStalePolicy(opt: Directive): Directive {
  if (opt.args[0].text !== "prefer_positive") {
    throw configError(
      opt.args[0],
      NAME,
      `serve_stale_policy: unknown policy '${opt.args[0].text}' (want prefer_positive)`,
    );
  }
  return opt;
}

/** servfail DURATION, in whole seconds. */
function servfail(opt: Directive): number {
  const ms = parseDuration(opt.args[0], NAME);
  if (ms > MAX_SERVFAIL_S * 1000) throw configError(opt.args[0], NAME, "servfail: at most 5m");
  return Math.ceil(ms / 1000);
}

/** disable success|denial [ZONES...], added to what earlier lines disabled. */
function disable(opt: Directive, disabled: CacheOptions["disable"], zones: readonly string[]): void {
  noBlock(opt, NAME);
  argCount(opt, NAME, 1, Infinity);
  const which = opt.args[0].text;
  if (which !== "success" && which !== "denial") {
    throw configError(opt.args[0], NAME, `disable: '${which}' is not success or denial`);
  }
  disabled[which] = [...disabled[which], ...zonesArg(opt.args.slice(1), zones, NAME)];
}

function percent(t: Token): number {
  const n = Number(t.text.slice(0, -1));
  if (!Number.isInteger(n) || n < 10 || n > 90) {
    throw configError(t, NAME, `prefetch: percentage '${t.text}' is not between 10% and 90%`);
  }
  return n;
}

function positiveDuration(t: Token): number {
  const ms = parseDuration(t, NAME);
  if (ms <= 0) throw configError(t, NAME, `prefetch: duration '${t.text}' must be above 0`);
  return ms;
}

export const setup: Setup = (d, ctx) => {
  const cache = new Cache(parseCache(d, ctx.zones));
  ctx.onStartup(() => cache.start());
  ctx.onShutdown(() => cache.stop());
  return cachePlugin(cache);
};
