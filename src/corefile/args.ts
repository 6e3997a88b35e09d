// Small parsers every setup uses. Each throws a ConfigError naming file:line and the directive, so a
// bad Corefile fails at start-up with a message an operator can act on.

import { configError } from "./errors.ts";
import type { Logger } from "pino";
import type { Directive, Token } from "./types.ts";
import { canonical, isSubdomain } from "../dns/name.ts";
import { reverseZones } from "./keys.ts";

/** Requires between min and max arguments (max Infinity for "any number"). */
export function argCount(d: Directive, plugin: string, min: number, max: number): void {
  const n = d.args.length;
  if (n < min || n > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw configError(d, plugin, `'${d.name}' takes ${want} argument(s), got ${n}`);
  }
}

/** Rejects a `{ ... }` block after a directive or option that takes none. */
export function noBlock(d: Directive, plugin: string): void {
  if (d.block) throw configError(d, plugin, `'${d.name}' takes no block`);
}

/** Dispatches each line of the directive's block to its handler; an unknown option is an error. */
export function blockOptions(
  d: Directive,
  plugin: string,
  handlers: Record<string, (opt: Directive) => void>,
): void {
  for (const opt of d.block ?? []) {
    const handle = Object.hasOwn(handlers, opt.name) ? handlers[opt.name] : undefined;
    if (!handle) throw configError(opt, plugin, `unknown property '${opt.name}'`);
    handle(opt);
  }
}

/** An option CoreDNS still parses but ignores: accepted, with any arguments, and one warning line that
 * names its file:line, so a Corefile written for CoreDNS keeps working. */
export function ignoredOption(opt: Directive, log: Logger, why: string): void {
  log.warn({ at: `${opt.file}:${opt.line}` }, `'${opt.name}' is ignored: ${why}`);
}

const durationUnits: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration ("30s", "1m30s", "500ms", "0"), in milliseconds. */
export function parseDuration(t: Token, plugin: string): number {
  const s = t.text;
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * durationUnits[m[2]];
    at = re.lastIndex;
  }
  if (at === 0 || at !== s.length)
    throw configError(t, plugin, `invalid duration '${s}' (want e.g. 5s, 1m30s)`);
  return total;
}

/** The longest wait a Node timer takes: past it setTimeout and setInterval fire at once (a
 * TimeoutOverflowWarning), so `reload 1000h` would check every millisecond. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** parseDuration for a duration that is waited out with a timer (intervals, delays, deadlines): one
 * over MAX_TIMER_MS (24.8 days) is that, which is as good as forever for each of them. */
export function parseTimerDuration(t: Token, plugin: string): number {
  return Math.min(parseDuration(t, plugin), MAX_TIMER_MS);
}

/** An integer argument within [min, max]. */
export function parseIntArg(t: Token, plugin: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(t.text)) throw configError(t, plugin, `'${t.text}' is not an integer`);
  const n = Number(t.text);
  if (n < min || n > max) throw configError(t, plugin, `${n} is out of range [${min}, ${max}]`);
  return n;
}

/** Canonical zones from arguments, or the server block's zones when there are none. A zone given
 * here must lie inside one of the block's zones, unless `outside` allows it (kubernetes: its first
 * forward zone names the PTR targets of a reverse block, as CoreDNS allows). */
export function zonesArg(
  args: Token[],
  blockZones: readonly string[],
  plugin: string,
  outside = false,
): string[] {
  if (args.length === 0) return [...blockZones];
  return args.flatMap((t) =>
    (t.text.includes("/") ? cidrZones(t, plugin) : [canonical(t.text)]).map((z) => {
      if (!/^[a-z0-9_.*-]+$/.test(z) && z !== ".") throw configError(t, plugin, `invalid zone '${t.text}'`);
      if (!outside && !blockZones.some((b) => isSubdomain(z, b))) {
        throw configError(
          t,
          plugin,
          `zone '${z}' is not inside the server block's zones (${blockZones.join(" ")})`,
        );
      }
      return z;
    }),
  );
}

/** A CIDR prefix among a plugin's zones stands for its reverse zones, as in a server block key
 * (CoreDNS normalizes both alike: `kubernetes cluster.local 10.0.0.0/8`). */
function cidrZones(t: Token, plugin: string): string[] {
  const zones = reverseZones(t.text.toLowerCase());
  if (!zones) throw configError(t, plugin, `invalid zone '${t.text}': not a CIDR prefix`);
  return zones;
}

/** A guard for options that may be given once and take no block: call it first in each one's
 * handler. Keeps its own record of what it saw, so make one per directive. */
export function onceEach(plugin: string): (opt: Directive) => void {
  const seen = new Set<string>();
  return (opt) => {
    if (seen.has(opt.name)) throw configError(opt, plugin, `'${opt.name}' is given twice`);
    seen.add(opt.name);
    noBlock(opt, plugin);
  };
}

/** The zones of `fallthrough [ZONES...]`, canonical: "." (every name) without arguments. A CIDR is its
 * reverse zones, as CoreDNS reads every zone argument. */
export function fallthroughZones(opt: Directive): string[] {
  if (opt.args.length === 0) return ["."];
  return opt.args.flatMap((t) => (t.text.includes("/") ? cidrZones(t, opt.name) : [canonical(t.text)]));
}
