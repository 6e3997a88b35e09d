// dnssec's series, as CoreDNS names them: coredns_dnssec_cache_entries{server,type="signature"},
// coredns_dnssec_cache_hits_total{server}, coredns_dnssec_cache_misses_total{server}; counted in
// plain Maps and read at scrape time.

import { scrapedCounter, scrapedGauge } from "../../metrics/registry.ts";

const hits = new Map<string, number>();
const misses = new Map<string, number>();
/** The signature caches, each with the server whose queries fill it. */
const caches = new Map<object, { server: () => string; size: () => number }>();

export function cacheHit(server: string): void {
  hits.set(server, (hits.get(server) ?? 0) + 1);
}

export function cacheMiss(server: string): void {
  misses.set(server, (misses.get(server) ?? 0) + 1);
}

/** Reports a cache's size under the server label its last query had; `forget` at shutdown. */
export function watchCache(cache: object, server: () => string, size: () => number): void {
  caches.set(cache, { server, size });
}

export function forgetCache(cache: object): void {
  caches.delete(cache);
}

scrapedCounter("coredns_dnssec_cache_hits_total", "The count of cache hits.", ["server"], (c) => {
  for (const [server, n] of hits) c.inc({ server }, n);
});
scrapedCounter("coredns_dnssec_cache_misses_total", "The count of cache misses.", ["server"], (c) => {
  for (const [server, n] of misses) c.inc({ server }, n);
});
scrapedGauge(
  "coredns_dnssec_cache_entries",
  "The number of elements in the dnssec cache.",
  ["server", "type"],
  (g) => {
    for (const { server, size } of caches.values()) g.set({ server: server(), type: "signature" }, size());
  },
);
