// The forward plugin's counters, process-wide so they keep counting across reloads (as CoreDNS's do).
// Plain numbers bumped on the query path; the prometheus plugin reads them at scrape time and names
// them as in the comments (CoreDNS's coredns_forward_* and coredns_proxy_* series, see metrics.ts).

import type { Proto } from "./conn.ts";
import type { Mismatch } from "../../client/reply-match.ts";
import { HistogramSeries, TIME_BUCKETS } from "../../metrics/plain.ts";

export interface UpstreamStats {
  /** The upstream as the `to` label shows it: "10.0.0.10:53", "[2001:db8::1]:53". */
  readonly to: string;
  /** coredns_forward_requests_total{to}: queries sent, one per attempt (a TCP retry counts again). */
  requests: number;
  /** coredns_forward_responses_total{to, rcode}: replies received, by rcode name ("NOERROR"). */
  readonly responses: Map<string, number>;
  /** coredns_proxy_request_duration_seconds{proxy_name="forward", to, rcode}, also served as
   * coredns_forward_request_duration_seconds{to, rcode}: one histogram per rcode name. */
  readonly durations: Map<string, HistogramSeries>;
  /** coredns_proxy_healthcheck_failures_total{proxy_name="forward", to} and
   * coredns_forward_healthcheck_failures_total{to}: health checks that got no reply. */
  healthcheckFailures: number;
  /** coredns_proxy_conn_cache_hits_total{proxy_name="forward", to, proto}: queries sent on a pooled
   * connection. */
  readonly connCacheHits: Record<Proto, number>;
  /** coredns_proxy_conn_cache_misses_total{proxy_name="forward", to, proto}: queries that had to open
   * a connection. */
  readonly connCacheMisses: Record<Proto, number>;
  /** Exchanges that got no usable reply (timeout, refused, reset). Not a CoreDNS series. */
  failures: number;
  /** clusterdns_forward_rejected_replies_total{to, reason}: packets from the upstream's address and
   * port that were not taken as a reply, by the check they failed: late or spoofed. Packets from any
   * other address or port never reach the connected socket (the kernel drops them). */
  readonly rejected: Record<Mismatch, number>;
  /** clusterdns_forward_case_fallbacks_total{to}: queries asked once more without 0x20 because the
   * replies failed the case check. */
  caseFallbacks: number;
}

export const forwardStats = {
  /** coredns_forward_healthcheck_broken_total: queries sent to a random upstream because all were down. */
  healthcheckBroken: 0,
  /** coredns_forward_max_concurrent_rejects_total: queries answered REFUSED by max_concurrent. */
  maxConcurrentRejects: 0,
  /** clusterdns_forward_udp_socket_cap_total: upstream queries not sent because the cap on open UDP
   * sockets was reached. */
  udpSocketCapRefused: 0,
  /** Per upstream, keyed by `to`. An upstream keeps its entry after a reload drops it. */
  upstreams: new Map<string, UpstreamStats>(),
};

/** The counters of one upstream, created at zero on first use. */
export function upstreamStats(to: string): UpstreamStats {
  let s = forwardStats.upstreams.get(to);
  if (!s) {
    s = {
      to,
      requests: 0,
      responses: new Map(),
      durations: new Map(),
      healthcheckFailures: 0,
      connCacheHits: { udp: 0, tcp: 0, "tcp-tls": 0, https: 0 },
      connCacheMisses: { udp: 0, tcp: 0, "tcp-tls": 0, https: 0 },
      failures: 0,
      rejected: { malformed: 0, id: 0, qr: 0, question: 0, case: 0 },
      caseFallbacks: 0,
    };
    forwardStats.upstreams.set(to, s);
  }
  return s;
}

/** Counts one reply: its rcode and how long the exchange took, in seconds. */
export function recordReply(s: UpstreamStats, rcode: string, seconds: number): void {
  s.responses.set(rcode, (s.responses.get(rcode) ?? 0) + 1);
  let h = s.durations.get(rcode);
  if (!h) {
    h = new HistogramSeries({ to: s.to, rcode }, TIME_BUCKETS);
    s.durations.set(rcode, h);
  }
  h.observe(seconds);
}
