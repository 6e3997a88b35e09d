// coredns_forward_* from the forward plugin's plain counters (stats.ts), read at scrape time.

import { Counter } from "prom-client";
import { registry, scrapedCounter } from "../../metrics/registry.ts";
import { CollectedHistogram, TIME_BUCKETS } from "../../metrics/plain.ts";
import { forwardStats, type UpstreamStats } from "./stats.ts";

type Fill = (c: Counter, s: UpstreamStats) => void;

function perUpstream(name: string, help: string, labelNames: string[], fill: Fill): void {
  scrapedCounter(name, help, labelNames, (c) => {
    for (const s of forwardStats.upstreams.values()) fill(c, s);
  });
}

function total(name: string, help: string, read: () => number): void {
  scrapedCounter(name, help, [], (c) => c.inc(read()));
}

perUpstream("coredns_forward_requests_total", "Queries sent to each upstream.", ["to"], (c, s) =>
  c.inc({ to: s.to }, s.requests),
);
perUpstream(
  "coredns_forward_responses_total",
  "Replies from each upstream, by rcode.",
  ["to", "rcode"],
  (c, s) => {
    for (const [rcode, n] of s.responses) c.inc({ to: s.to, rcode }, n);
  },
);
perUpstream(
  "coredns_forward_healthcheck_failures_total",
  "Health checks of each upstream that got no reply.",
  ["to"],
  (c, s) => c.inc({ to: s.to }, s.healthcheckFailures),
);
perUpstream(
  "coredns_proxy_conn_cache_hits_total",
  "Queries sent on a pooled connection.",
  ["to", "proxy_name", "type"],
  (c, s) => {
    for (const type of ["udp", "tcp", "tcp-tls", "https"] as const)
      c.inc({ to: s.to, proxy_name: "forward", type }, s.connCacheHits[type]);
  },
);
perUpstream(
  "coredns_proxy_conn_cache_misses_total",
  "Queries that had to open a new connection.",
  ["to", "proxy_name", "type"],
  (c, s) => {
    for (const type of ["udp", "tcp", "tcp-tls", "https"] as const)
      c.inc({ to: s.to, proxy_name: "forward", type }, s.connCacheMisses[type]);
  },
);
perUpstream(
  "clusterdns_forward_rejected_replies_total",
  "Packets from each upstream's address and port not taken as the reply, by the check they failed " +
    "(id, qr, question, case, malformed): late replies or forgeries.",
  ["to", "reason"],
  (c, s) => {
    for (const [reason, n] of Object.entries(s.rejected)) c.inc({ to: s.to, reason }, n);
  },
);
perUpstream(
  "clusterdns_forward_case_fallbacks_total",
  "Queries asked again without 0x20 because the upstream's replies failed the case check.",
  ["to"],
  (c, s) => c.inc({ to: s.to }, s.caseFallbacks),
);
total(
  "clusterdns_forward_udp_socket_cap_total",
  "Upstream queries not sent because the cap on open UDP sockets was reached.",
  () => forwardStats.udpSocketCapRefused,
);
total(
  "coredns_forward_healthcheck_broken_total",
  "Queries sent to a random upstream because every upstream was marked down.",
  () => forwardStats.healthcheckBroken,
);
total(
  "coredns_forward_max_concurrent_rejects_total",
  "Queries refused because max_concurrent queries were already in flight.",
  () => forwardStats.maxConcurrentRejects,
);
registry.registerMetric(
  new CollectedHistogram(
    "coredns_forward_request_duration_seconds",
    "Seconds from sending a query upstream to its reply, by upstream and rcode.",
    TIME_BUCKETS,
    function* () {
      for (const s of forwardStats.upstreams.values()) yield* s.durations.values();
    },
  ).asMetric(),
);
