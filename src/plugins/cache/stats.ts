// The cache's counters: process-wide, by server and zone, so they keep counting across reloads as
// CoreDNS's do. Plain numbers on the query path; metrics.ts names them at scrape time.

import type { CacheKind as Kind } from "../../answers/policy.ts";

export interface CacheStats {
  readonly server: string;
  readonly zones: string;
  requests: number;
  hits: { success: number; denial: number };
  misses: number;
  prefetch: number;
  servedStale: number;
  /** Background refreshes (prefetch, stale immediate) that failed or threw. Not a CoreDNS series. */
  refreshFailures: number;
  evictions: { success: number; denial: number };
}

export const cacheStats = new Map<string, CacheStats>();

export function statsFor(server: string, zones: string): CacheStats {
  const key = `${server} ${zones}`;
  let s = cacheStats.get(key);
  if (s === undefined) {
    s = {
      server,
      zones,
      requests: 0,
      hits: { success: 0, denial: 0 },
      misses: 0,
      prefetch: 0,
      servedStale: 0,
      refreshFailures: 0,
      evictions: { success: 0, denial: 0 },
    };
    cacheStats.set(key, s);
  }
  return s;
}

/** The entries of every running cache, for coredns_cache_entries: a reload replaces the set. */
export interface LiveCache {
  server: string | undefined;
  readonly zones: string;
  size(kind: Kind): number;
}
export const liveCaches = new Set<LiveCache>();
