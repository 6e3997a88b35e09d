// Checks over a whole parsed Corefile, run once at start-up so a mistake fails with file:line.

import { ConfigError } from "./errors.ts";
import { parseKey } from "./keys.ts";
import { pluginCompat } from "../compat/coredns.ts";
import type { ServerBlock } from "./types.ts";

/** Every directive of every server block must be one of `known` (the plugin registry). One that is a
 * plugin of CoreDNS clusterdns does not have (`notSupported`) gets a message that says so, and why. */
export function checkDirectives(
  blocks: ServerBlock[],
  known: ReadonlyMap<string, unknown>,
  notSupported: ReadonlySet<string> = new Set(),
): void {
  for (const b of blocks) {
    for (const d of b.directives) {
      if (known.has(d.name)) continue;
      const why = pluginCompat(d.name)?.note;
      const message = notSupported.has(d.name)
        ? `plugin ${d.name} of CoreDNS is not supported by clusterdns${why ? `: ${why}` : ""} (see docs/compatibility.md)`
        : `Unknown directive '${d.name}'`;
      throw new ConfigError(d.file, d.line, message);
    }
  }
}

/** Every key parses, and no zone is served twice on one port. Keys that name no port count as
 * `defaultPort`; without it they only clash with each other (parseCorefile cannot know -dns.port). */
export function checkKeys(blocks: ServerBlock[], defaultPort?: number): void {
  const seen = new Map<string, string>();
  for (const b of blocks) {
    for (const t of b.keys) {
      for (const k of parseKey(t)) {
        const port = k.port ?? defaultPort;
        const id = `${k.zone} ${port ?? "default"}`;
        const first = seen.get(id);
        if (first !== undefined) {
          const where = port === undefined ? "the default port" : `port ${port}`;
          throw new ConfigError(
            t.file,
            t.line,
            `cannot serve '${t.text}': zone ${k.zone} on ${where} is already defined at ${first}`,
          );
        }
        seen.set(id, `${t.file}:${t.line}`);
      }
    }
  }
}
