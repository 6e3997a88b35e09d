// Event-loop delay gauges in place of prom-client's nodejs_eventloop_lag_{min,...,p99}_seconds, under
// the same names. prom-client reads a histogram of samples taken every `resolution` ms and empties it
// at every scrape: a second scrape within that time (two Prometheus replicas scraping together) found
// it empty and reported a minimum of 2^63 ns (292 years), a maximum of 0 and NaN for the mean and the
// deviation. These report the delays seen since the last scrape that had any, and keep the values
// until a sample arrives.

import { monitorEventLoopDelay } from "node:perf_hooks";
import { Gauge, type Registry } from "prom-client";

type Aggregator = "min" | "max" | "average";
type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;

const SERIES: [string, string, Aggregator, (h: IntervalHistogram) => number][] = [
  ["min", "The minimum recorded event loop delay.", "min", (h) => h.min],
  ["max", "The maximum recorded event loop delay.", "max", (h) => h.max],
  ["mean", "The mean of the recorded event loop delays.", "average", (h) => h.mean],
  ["stddev", "The standard deviation of the recorded event loop delays.", "average", (h) => h.stddev],
  ["p50", "The 50th percentile of the recorded event loop delays.", "average", (h) => h.percentile(50)],
  ["p90", "The 90th percentile of the recorded event loop delays.", "average", (h) => h.percentile(90)],
  ["p99", "The 99th percentile of the recorded event loop delays.", "average", (h) => h.percentile(99)],
];

/** Replaces prom-client's delay gauges in `registry` (after collectDefaultMetrics) with these. */
export function eventLoopDelayGauges(registry: Registry, resolution: number): void {
  const histogram = monitorEventLoopDelay({ resolution });
  histogram.enable();
  const gauges: Gauge[] = [];
  for (const [key, help, aggregator] of SERIES) {
    const name = `nodejs_eventloop_lag_${key}_seconds`;
    registry.removeSingleMetric(name);
    // The first gauge's collect sets them all: a scrape asks the gauges in the order they were added.
    const collect = gauges.length > 0 ? undefined : () => readInto(histogram, gauges);
    gauges.push(new Gauge({ name, help, aggregator, registers: [registry], collect }));
  }
}

function readInto(histogram: IntervalHistogram, gauges: Gauge[]): void {
  if (histogram.count === 0) return;
  SERIES.forEach(([, , , read], i) => gauges[i].set(read(histogram) / 1e9));
  histogram.reset();
}
