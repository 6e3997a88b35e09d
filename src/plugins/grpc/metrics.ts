// coredns_grpc_* (CoreDNS's grpc plugin's series, same names and labels) and clusterdns_grpc_failures_total,
// read from the plain counters (stats.ts) at scrape time.

import { registry, scrapedCounter } from "../../metrics/registry.ts";
import { CollectedHistogram, TIME_BUCKETS } from "../../metrics/plain.ts";
import { grpcStats } from "./stats.ts";

scrapedCounter("coredns_grpc_requests_total", "Calls sent to each gRPC upstream.", ["to"], (c) => {
  for (const s of grpcStats()) c.inc({ to: s.to }, s.requests);
});
scrapedCounter(
  "coredns_grpc_responses_total",
  "Replies from each gRPC upstream, by rcode.",
  ["rcode", "to"],
  (c) => {
    for (const s of grpcStats()) for (const [rcode, n] of s.responses) c.inc({ rcode, to: s.to }, n);
  },
);
scrapedCounter(
  "clusterdns_grpc_failures_total",
  "Calls to each gRPC upstream that got no usable reply, by why: network, timeout, grpc_status, http_status, mismatch (a reply that is not the query's), malformed.",
  ["to", "reason"],
  (c) => {
    for (const s of grpcStats()) for (const [reason, n] of s.failures) c.inc({ to: s.to, reason }, n);
  },
);
registry.registerMetric(
  new CollectedHistogram(
    "coredns_grpc_request_duration_seconds",
    "Seconds from sending a call to a gRPC upstream to its reply.",
    TIME_BUCKETS,
    function* () {
      for (const s of grpcStats()) yield s.duration;
    },
  ).asMetric(),
);
