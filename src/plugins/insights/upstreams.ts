// Upstream health from the forward and grpc plugins' own counters (forward/stats.ts, grpc/stats.ts),
// sampled every 10 s, so insights adds nothing to a query sent upstream: per upstream the queries,
// failures, rcodes and mean latency over the last minute. The two plugins count different things
// (forward a histogram per rcode and one failure count, grpc one histogram and failures by reason), so
// each is read into the same Sample here rather than made to share a shape.

import { forwardStats } from "../forward/stats.ts";
import { grpcStats } from "../grpc/stats.ts";
import type { HistogramSeries } from "../../metrics/plain.ts";

interface Sample {
  plugin: UpstreamPlugin;
  to: string;
  requests: number;
  failures: number;
  nxdomain: number;
  servfail: number;
  replies: number;
  seconds: number;
}

/** The plugin that sends to the upstream. */
export type UpstreamPlugin = "forward" | "grpc";

/** Samples kept per upstream: 7, so the oldest is a minute before the newest. */
const KEEP = 7;

export interface UpstreamHealth {
  /** As the plugin's `to` metric label shows it: "10.0.0.10:53", "unix:///run/g.sock". */
  to: string;
  /** Added after `to`: a forward and a grpc upstream may have the same `to`. */
  plugin: UpstreamPlugin;
  /** Over the last minute (or since the first sample). */
  requests: number;
  failures: number;
  nxdomain: number;
  servfail: number;
  /** Mean time to a reply, in ms; null without replies. */
  latencyMs: number | null;
}

function sum(values: Iterable<number>): number {
  let n = 0;
  for (const v of values) n += v;
  return n;
}

interface Counted {
  to: string;
  requests: number;
  responses: Map<string, number>;
}

/** One upstream's Sample: `failures` and the histograms of its replies are counted differently by
 * each plugin. */
function sampleOf(
  plugin: UpstreamPlugin,
  s: Counted,
  failures: number,
  histograms: Iterable<HistogramSeries>,
): Sample {
  const out: Sample = {
    plugin,
    to: s.to,
    requests: s.requests,
    failures,
    nxdomain: s.responses.get("NXDOMAIN") ?? 0,
    servfail: s.responses.get("SERVFAIL") ?? 0,
    replies: 0,
    seconds: 0,
  };
  for (const h of histograms) {
    out.replies += sum(h.counts);
    out.seconds += h.sum;
  }
  return out;
}

/** Every upstream's counters now, keyed by plugin and `to`. */
function read(): Map<string, Sample> {
  const out = new Map<string, Sample>();
  for (const s of forwardStats.upstreams.values())
    out.set(`forward ${s.to}`, sampleOf("forward", s, s.failures, s.durations.values()));
  for (const s of grpcStats())
    out.set(`grpc ${s.to}`, sampleOf("grpc", s, sum(s.failures.values()), [s.duration]));
  return out;
}

export class Upstreams {
  readonly #samples: Map<string, Sample>[] = [];

  sample(): void {
    this.#samples.push(read());
    if (this.#samples.length > KEEP) this.#samples.shift();
  }

  /** Each upstream's last minute: the counters now minus the oldest sample. */
  health(): UpstreamHealth[] {
    const now = read();
    const old = this.#samples[0] ?? new Map<string, Sample>();
    return [...now].map(([key, n]) => {
      const o = old.get(key) ?? {
        requests: 0,
        failures: 0,
        nxdomain: 0,
        servfail: 0,
        replies: 0,
        seconds: 0,
      };
      const replies = n.replies - o.replies;
      return {
        to: n.to,
        plugin: n.plugin,
        requests: n.requests - o.requests,
        failures: n.failures - o.failures,
        nxdomain: n.nxdomain - o.nxdomain,
        servfail: n.servfail - o.servfail,
        latencyMs: replies > 0 ? Math.round(((n.seconds - o.seconds) / replies) * 1e5) / 100 : null,
      };
    });
  }
}
