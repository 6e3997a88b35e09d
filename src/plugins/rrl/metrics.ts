// rrl's series: clusterdns_rrl_responses_total{action} (dropped, slipped, reported) and
// clusterdns_rrl_accounts (client networks and responses being counted, in the tables every thread
// shares: the main thread's gauge alone, registry.ts does not add the workers' up).

import { scrapedCounter, scrapedGauge } from "../../metrics/registry.ts";
import { liveTables, rrlStats } from "./stats.ts";

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
    for (const t of liveTables) n += t.held;
    g.set(n);
  },
);
