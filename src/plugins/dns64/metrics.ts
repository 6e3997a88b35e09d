// dns64's series: CoreDNS's coredns_dns64_requests_translated_total{server}, counted in a plain Map
// and read at scrape time.

import { scrapedCounter } from "../../metrics/registry.ts";

const counts = new Map<string, number>();

/** One reply synthesized for a query that reached `server`. */
export function translated(server: string): void {
  counts.set(server, (counts.get(server) ?? 0) + 1);
}

scrapedCounter(
  "coredns_dns64_requests_translated_total",
  "Counter of DNS requests translated by dns64.",
  ["server"],
  (c) => {
    for (const [server, n] of counts) c.inc({ server }, n);
  },
);
