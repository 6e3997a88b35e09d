// Upstream health from the forward plugin's own counters (forward/stats.ts), sampled every 10 s, so
// insights adds nothing to a forwarded query: per upstream the queries, failures, rcodes and mean
// latency over the last minute.

import { forwardStats } from "../forward/stats.ts";

interface Sample {
  requests: number;
  failures: number;
  nxdomain: number;
  servfail: number;
  replies: number;
  seconds: number;
}

/** Samples kept per upstream: 7, so the oldest is a minute before the newest. */
const KEEP = 7;

export interface UpstreamHealth {
  to: string;
  /** Over the last minute (or since the first sample). */
  requests: number;
  failures: number;
  nxdomain: number;
  servfail: number;
  /** Mean time to a reply, in ms; null without replies. */
  latencyMs: number | null;
}

function read(): Map<string, Sample> {
  const out = new Map<string, Sample>();
  for (const s of forwardStats.upstreams.values()) {
    let replies = 0;
    let seconds = 0;
    for (const h of s.durations.values()) {
      for (const c of h.counts) replies += c;
      seconds += h.sum;
    }
    out.set(s.to, {
      requests: s.requests,
      failures: s.failures,
      nxdomain: s.responses.get("NXDOMAIN") ?? 0,
      servfail: s.responses.get("SERVFAIL") ?? 0,
      replies,
      seconds,
    });
  }
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
    return [...now].map(([to, n]) => {
      const o = old.get(to) ?? { requests: 0, failures: 0, nxdomain: 0, servfail: 0, replies: 0, seconds: 0 };
      const replies = n.replies - o.replies;
      return {
        to,
        requests: n.requests - o.requests,
        failures: n.failures - o.failures,
        nxdomain: n.nxdomain - o.nxdomain,
        servfail: n.servfail - o.servfail,
        latencyMs: replies > 0 ? Math.round(((n.seconds - o.seconds) / replies) * 1e5) / 100 : null,
      };
    });
  }
}
