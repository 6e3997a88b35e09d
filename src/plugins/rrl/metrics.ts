// rrl's series: clusterdns_rrl_responses_total{action} (dropped, slipped, reported) and
// clusterdns_rrl_accounts (client networks and responses being counted).

import { scrapedCounter, scrapedGauge } from "../../metrics/registry.ts";
import { liveLimiters, rrlStats } from "./stats.ts";

scrapedCounter(
  "clusterdns_rrl_responses_total",
  "UDP responses over their rate limit: dropped, slipped (sent as an empty truncated reply), or reported (report-only).",
  ["action"],
  (c) => {
    c.inc({ action: "dropped" }, rrlStats.dropped);
    c.inc({ action: "slipped" }, rrlStats.slipped);
    c.inc({ action: "reported" }, rrlStats.reported);
  },
);

scrapedGauge(
  "clusterdns_rrl_accounts",
  "Response-rate accounts held (one per client network and kind of response), at most max-table-size per block.",
  [],
  (g) => {
    let n = 0;
    for (const l of liveLimiters) n += l.accounts;
    g.set(n);
  },
);
