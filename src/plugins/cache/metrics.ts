// coredns_cache_* from the cache's plain counters (stats.ts), read at scrape time, with CoreDNS's
// names and labels (view is always "": clusterdns has no views).

import { scrapedCounter, scrapedGauge } from "../../metrics/registry.ts";
import { cacheStats, liveCaches, type CacheStats } from "./stats.ts";

const KINDS = ["success", "denial"] as const;
const LABELS = ["server", "zones", "view"];
const base = (s: CacheStats) => ({ server: s.server, zones: s.zones, view: "" });

/** One series per server and zones, from one number of the stats. */
function each(name: string, help: string, read: (s: CacheStats) => number): void {
  scrapedCounter(name, help, LABELS, (c) => {
    for (const s of cacheStats.values()) c.inc(base(s), read(s));
  });
}

/** One series per server, zones and cache (success, denial). */
function byKind(
  name: string,
  help: string,
  read: (s: CacheStats) => Record<"success" | "denial", number>,
): void {
  scrapedCounter(name, help, ["server", "type", "zones", "view"], (c) => {
    for (const s of cacheStats.values()) for (const type of KINDS) c.inc({ ...base(s), type }, read(s)[type]);
  });
}

each("coredns_cache_requests_total", "Queries the cache looked at.", (s) => s.requests);
each("coredns_cache_misses_total", "Queries the cache could not answer.", (s) => s.misses);
each("coredns_cache_prefetch_total", "Entries refreshed before they expired.", (s) => s.prefetch);
each("coredns_cache_served_stale_total", "Queries answered with an expired entry.", (s) => s.servedStale);
byKind("coredns_cache_hits_total", "Queries answered from the cache, by cache.", (s) => s.hits);
byKind("coredns_cache_evictions_total", "Entries dropped to make room, by cache.", (s) => s.evictions);

scrapedGauge(
  "coredns_cache_entries",
  "Entries in the cache, by cache.",
  ["server", "type", "zones", "view"],
  (g) => {
    for (const live of liveCaches) {
      if (live.server === undefined) continue;
      for (const type of KINDS)
        g.inc({ server: live.server, type, zones: live.zones, view: "" }, live.size(type));
    }
  },
);
