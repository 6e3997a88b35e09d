// The grpc plugin's counters per upstream, process-wide so they keep counting across reloads (as
// CoreDNS's do). Plain numbers bumped on the query path; metrics.ts names them at scrape time.

import type { Mismatch } from "../../client/reply-match.ts";
import { HistogramSeries, TIME_BUCKETS } from "../../metrics/plain.ts";

export interface GrpcStats {
  /** The upstream as the `to` label shows it: "10.0.0.10:443", "[2001:db8::1]:53", "unix:///run/g.sock". */
  readonly to: string;
  /** coredns_grpc_requests_total{to}: calls sent, one per try. */
  requests: number;
  /** coredns_grpc_responses_total{to, rcode}: replies, by rcode name ("NOERROR"). */
  readonly responses: Map<string, number>;
  /** coredns_grpc_request_duration_seconds{to}: from sending a call to its reply. */
  readonly duration: HistogramSeries;
  /** clusterdns_grpc_failures_total{to, reason}: calls that got no usable reply, by why. */
  readonly failures: Map<string, number>;
  /** Replies that failed the checks (reply-match.ts), by check: counted in `failures` as "mismatch". */
  readonly rejected: Record<Mismatch, number>;
}

const upstreams = new Map<string, GrpcStats>();

/** Every upstream's counters (one entry per `to`, kept when a reload drops the upstream). */
export function grpcStats(): Iterable<GrpcStats> {
  return upstreams.values();
}

/** The counters of one upstream, created at zero on first use. */
export function upstreamGrpcStats(to: string): GrpcStats {
  let s = upstreams.get(to);
  if (!s) {
    s = {
      to,
      requests: 0,
      responses: new Map(),
      duration: new HistogramSeries({ to }, TIME_BUCKETS),
      failures: new Map(),
      rejected: { malformed: 0, id: 0, qr: 0, question: 0, case: 0 },
    };
    upstreams.set(to, s);
  }
  return s;
}

/** Adds one to `map`'s count of `key`. */
export function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
