// The forward plugin's series from its plain counters (stats.ts), read at scrape time: CoreDNS's
// coredns_proxy_* (1.11 and later, where forward's exchanges are counted by its proxy package, with
// proxy_name="forward") and the coredns_forward_* that dashboards of older versions read. Both names
// come from the same counts, so serving both costs nothing per query.

import { Counter } from "prom-client";
import { registry, scrapedCounter } from "../../metrics/registry.ts";
import { CollectedHistogram, TIME_BUCKETS } from "../../metrics/plain.ts";
import { forwardStats, type UpstreamStats } from "./stats.ts";
import type { Proto } from "./conn.ts";

type Fill = (c: Counter, s: UpstreamStats) => void;

/** The proxy_name label of CoreDNS's coredns_proxy_* series for forward's exchanges. */
const PROXY_NAME = "forward";

function perUpstream(name: string, help: string, labelNames: string[], fill: Fill): void {
  scrapedCounter(name, help, labelNames, (c) => {
    for (const s of forwardStats.upstreams.values()) fill(c, s);
  });
}

/** A counter per upstream and transport, as CoreDNS's proxy package labels its connection cache. */
function perProto(name: string, help: string, read: (s: UpstreamStats) => Record<Proto, number>): void {
  perUpstream(name, help, ["proxy_name", "to", "proto"], (c, s) => {
    for (const [proto, n] of Object.entries(read(s))) c.inc({ proxy_name: PROXY_NAME, to: s.to, proto }, n);
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
  "coredns_proxy_healthcheck_failures_total",
  "Health checks of each upstream that got no reply.",
  ["proxy_name", "to"],
  (c, s) => c.inc({ proxy_name: PROXY_NAME, to: s.to }, s.healthcheckFailures),
);
perProto(
  "coredns_proxy_conn_cache_hits_total",
  "Queries sent on a pooled connection.",
  (s) => s.connCacheHits,
);
perProto(
  "coredns_proxy_conn_cache_misses_total",
  "Queries that had to open a new connection.",
  (s) => s.connCacheMisses,
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
function* durations() {
  for (const s of forwardStats.upstreams.values()) yield* s.durations.values();
}
const DURATION_HELP = "Seconds from sending a query upstream to its reply, by upstream and rcode.";
for (const h of [
  new CollectedHistogram("coredns_forward_request_duration_seconds", DURATION_HELP, TIME_BUCKETS, durations),
  new CollectedHistogram("coredns_proxy_request_duration_seconds", DURATION_HELP, TIME_BUCKETS, durations, {
    proxy_name: PROXY_NAME,
  }),
])
  registry.registerMetric(h.asMetric());
