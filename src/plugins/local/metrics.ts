// local's series: CoreDNS's coredns_local_localhost_requests_total, without labels (as CoreDNS: the
// client is what matters, and the debug log has it).

import { scrapedCounter } from "../../metrics/registry.ts";

let count = 0;

/** One query for a name under `localhost.` or `localhost.<domain>` (not `localhost.` itself). */
export function localhostAsked(): void {
  count++;
}

scrapedCounter(
  "coredns_local_localhost_requests_total",
  "Counter of localhost.<domain> and *.localhost. requests.",
  [],
  (c) => c.inc(count),
);
