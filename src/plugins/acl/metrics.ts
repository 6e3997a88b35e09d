// CoreDNS's acl series, read from stats.ts at scrape time.

import { scrapedCounter } from "../../metrics/registry.ts";
import type { Action } from "./policy.ts";
import { aclCounters } from "./stats.ts";

const SERIES: [Action, string, string][] = [
  ["block", "coredns_acl_blocked_requests_total", "Queries acl answered REFUSED."],
  ["filter", "coredns_acl_filtered_requests_total", "Queries acl answered with an empty NOERROR."],
  ["drop", "coredns_acl_dropped_requests_total", "Queries acl left unanswered."],
  ["allow", "coredns_acl_allowed_requests_total", "Queries acl let through."],
];

for (const [action, name, help] of SERIES) {
  scrapedCounter(name, help, ["server", "zone", "view"], (c) => {
    for (const { server, zone, stats } of aclCounters.values())
      c.inc({ server, zone, view: "" }, stats[action]);
  });
}
