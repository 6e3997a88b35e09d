// Checks over a whole parsed Corefile, run once at start-up so a mistake fails with file:line.

import { ConfigError } from "./errors.ts";
import { parseKey } from "./keys.ts";
import { pluginCompat, removedPlugin } from "../compat/coredns.ts";
import { canonical, isSubdomain } from "../dns/name.ts";
import type { Directive, ServerBlock } from "./types.ts";

/** Every directive of every server block must be one of `known` (the plugin registry), and given no
 * more often than CoreDNS allows: the first mistake, thrown. */
export function checkDirectives(
  blocks: ServerBlock[],
  known: ReadonlyMap<string, unknown>,
  notSupported: ReadonlySet<string> = new Set(),
): void {
  const [first] = directiveErrors(blocks, known, notSupported);
  if (first) throw first;
}

/** Every directive that cannot be set up for its name alone, one error each, in the file's order. A
 * plugin of CoreDNS clusterdns does not have (`notSupported`), or one CoreDNS removed, is named as
 * such; a second line of a plugin CoreDNS takes once per block (compat data's `twice`) is refused. */
export function directiveErrors(
  blocks: ServerBlock[],
  known: ReadonlyMap<string, unknown>,
  notSupported: ReadonlySet<string> = new Set(),
): ConfigError[] {
  const out: ConfigError[] = [];
  for (const b of blocks) {
    const earlier: Directive[] = [];
    for (const d of b.directives) {
      const problem = known.has(d.name) ? secondLine(d, earlier) : unknownDirective(d.name, notSupported);
      if (problem) out.push(new ConfigError(d.file, d.line, problem));
      earlier.push(d);
    }
  }
  return out;
}

function unknownDirective(name: string, notSupported: ReadonlySet<string>): string {
  const removed = removedPlugin(name);
  if (removed) return `plugin ${name} was removed from CoreDNS in ${removed.removedIn}: ${removed.instead}`;
  if (!notSupported.has(name)) return `Unknown directive '${name}'`;
  const why = pluginCompat(name)?.note;
  return `plugin ${name} of CoreDNS is not supported by clusterdns${why ? `: ${why}` : ""} (see docs/compatibility.md)`;
}

/** Why `d` cannot follow the block's `earlier` lines, if it cannot. */
function secondLine(d: Directive, earlier: readonly Directive[]): string | undefined {
  const row = pluginCompat(d.name);
  const twice = row?.twice;
  const same = earlier.filter((e) => e.name === d.name);
  if (!twice || same.length === 0) return undefined;
  const at = (e: Directive) => `${e.file}:${e.line}`;
  if (twice === "refused")
    return `${d.name}: this plugin can only be used once per server block (first at ${at(same[0])})`;
  // forward FROM: the first line whose FROM holds the name takes the query, so a later FROM inside an
  // earlier one is never reached, unless the earlier one lets queries on (except, next).
  const from = (e: Directive) => canonical(e.args[0]?.text ?? ".");
  const passes = (e: Directive) => e.block?.some((o) => row?.passesOn?.includes(o.name));
  const covering = same.find((e) => !passes(e) && isSubdomain(from(d), from(e)));
  if (!covering) return undefined;
  return `${d.name}: never reached: '${d.name} ${from(covering)}' at ${at(covering)} already takes every name in ${from(d)} (CoreDNS refused a second ${d.name} before 1.9.4, and never reaches it since)`;
}

/** Every key parses, no zone is served twice on one port, and a port carries one transport (plain DNS,
 * TLS or HTTPS). Keys that name no port count as `defaultPort`; without it they only clash with each
 * other (parseCorefile cannot know -dns.port). */
export function checkKeys(blocks: ServerBlock[], defaultPort?: number): void {
  const seen = new Map<string, string>();
  const transports = new Map<string, { scheme: string; at: string }>();
  for (const b of blocks) {
    // A block with a view shares its zone and port with others: the first whose view matches answers
    // (CoreDNS checks only the blocks without one).
    const viewed = b.directives.some((d) => d.name === "view");
    for (const t of b.keys) {
      for (const k of parseKey(t)) {
        const port = k.port ?? defaultPort;
        const other = transports.get(`${port ?? "default"}`);
        if (other !== undefined && other.scheme !== k.scheme) {
          const where = port === undefined ? "the default port" : `port ${port}`;
          throw new ConfigError(
            t.file,
            t.line,
            `cannot serve '${t.text}': ${where} already serves ${other.scheme}:// at ${other.at} (one transport per port)`,
          );
        }
        transports.set(`${port ?? "default"}`, { scheme: k.scheme, at: `${t.file}:${t.line}` });
        const id = `${k.zone} ${port ?? "default"}`;
        const first = viewed ? undefined : seen.get(id);
        if (first !== undefined) {
          const where = port === undefined ? "the default port" : `port ${port}`;
          throw new ConfigError(
            t.file,
            t.line,
            `cannot serve '${t.text}': zone ${k.zone} on ${where} is already defined at ${first}`,
          );
        }
        if (!viewed) seen.set(id, `${t.file}:${t.line}`);
      }
    }
  }
}
