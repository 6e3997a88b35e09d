// autopath [ZONE...] RESOLV-CONF|@kubernetes
//
// RESOLV-CONF: one search list for every client, from a resolv.conf-style file. @kubernetes: each
// client's own list from its pod's namespace (needs `pods verified`), followed by the search domains
// of this server's /etc/resolv.conf, as CoreDNS does.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, noBlock, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical } from "../../dns/name.ts";
import { parseResolvConf } from "../../resolver/resolv-conf.ts";
import { autopath } from "./autopath.ts";
import type { SearchPathSource } from "./search-path.ts";
import { SEARCH_PATHS } from "../kubernetes/answers/search-paths.ts";
import { offered, type OfferKey } from "../offers.ts";
import "./metrics.ts";

const NAME = "autopath";
/** The plugins that know clients, by the name autopath gives them (@kubernetes), with the key of what
 * they offer. */
const SEARCH_PATH_SOURCES: Readonly<Record<string, OfferKey<SearchPathSource>>> = {
  "@kubernetes": SEARCH_PATHS,
};

/** Where the server's own search domains come from in @plugin mode. */
const HOST_RESOLV_CONF = "/etc/resolv.conf";

/** The search domains of a resolv.conf, read as glibc reads them (src/resolver): one leading "." is
 * dropped, and the root left ("." alone, systemd-resolved's `search .`) is the name as is. Roots before
 * the first domain are left out: a client sends the name as is there, never below a first domain. */
function searchOf(file: string): string[] {
  const search = parseResolvConf(readFileSync(file, "utf8"), file).search.map((d) =>
    canonical(d.startsWith(".") ? d.slice(1) || "." : d),
  );
  while (search[0] === ".") search.shift();
  return search;
}

export const setup: Setup = (d, ctx) => {
  argCount(d, NAME, 1, Infinity);
  noBlock(d, NAME);
  const last = d.args[d.args.length - 1];
  const zones = zonesArg(d.args.slice(0, -1), ctx.zones, NAME);

  if (!last.text.startsWith("@")) {
    const file = resolve(ctx.root, last.text);
    let search: string[];
    try {
      search = searchOf(file);
    } catch (err) {
      throw configError(last, NAME, `cannot read ${file}: ${(err as Error).message}`);
    }
    if (search.length === 0) throw configError(last, NAME, `${file} has no search domains`);
    const fixed: SearchPathSource = { searchPath: () => search };
    return autopath({ zones, source: () => fixed, extra: [], lookup: ctx.lookup });
  }

  const plugin = last.text.slice(1);
  const key = SEARCH_PATH_SOURCES[last.text];
  if (key === undefined) {
    throw configError(last, NAME, `'${last.text}' names no plugin that knows clients (want @kubernetes)`);
  }
  if (!ctx.block.directives.includes(plugin)) {
    throw configError(last, NAME, `'${last.text}' needs the ${plugin} plugin in this server block`);
  }
  let extra: string[] = [];
  try {
    extra = searchOf(HOST_RESOLV_CONF);
  } catch {
    // No resolv.conf: the client's own domains and the name as is are the whole path.
  }
  let source: SearchPathSource | undefined;
  // The source plugin is set up after autopath (chain order): look it up once every block is built.
  ctx.onStartup(() => {
    const s = offered(ctx.block.shared, key);
    if (s === undefined) throw configError(last, NAME, `the ${plugin} plugin offers no search paths`);
    if (s.unusable !== undefined) throw configError(last, NAME, s.unusable);
    source = s;
  });
  const none: SearchPathSource = { searchPath: () => undefined };
  return autopath({ zones, source: () => source ?? none, extra, lookup: ctx.lookup });
};
