// health's self-check, as CoreDNS's: once a second the server asks its own /health and times the reply
// (coredns_health_request_duration_seconds; one that fails counts in coredns_health_request_failures_total).
// The request is local, so a slow one says the process itself is overloaded: the event loop that
// answers it is the one that answers DNS.

import type { Logger } from "pino";
import { http } from "../../http/node-http.ts";
import { PlainCounter, PlainHistogram } from "../../metrics/plain.ts";
import { joinHostPort } from "../../dns/host-port.ts";
import { registry } from "../../metrics/registry.ts";

/** CoreDNS's SlimTimeBuckets. */
const SLIM_TIME_BUCKETS = [0.00025, 0.0025, 0.025, 0.25, 2.5];
const EVERY_MS = 1000;
const TIMEOUT_MS = 3000;
/** Slower than this, a local request is logged (CoreDNS's bound). */
const SLOW_MS = 1000;

const duration = new PlainHistogram(
  "coredns_health_request_duration_seconds",
  "Histogram of the time (in seconds) each request took.",
  SLIM_TIME_BUCKETS,
);
const failures = new PlainCounter(
  "coredns_health_request_failures_total",
  "The number of times the health check failed.",
);
registry.registerMetric(duration.asMetric());
registry.registerMetric(failures.asMetric());
const timed = duration.series({});
const failed = failures.series({});

/** Asks http://HOST:PORT/health every second, where `target` says (undefined: not listening yet);
 * returns the function that stops it. */
export function startSelfCheck(
  target: () => { host: string; port: number } | undefined,
  log: Logger,
): () => void {
  let busy = false;
  const timer = setInterval(() => {
    const t = target();
    if (t === undefined || busy) return;
    busy = true;
    const start = performance.now();
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      busy = false;
      const ms = performance.now() - start;
      timed.observe(ms / 1000);
      const url = `http://${joinHostPort(t.host, t.port)}/health`;
      if (err !== undefined) {
        failed.value++;
        log.warn({ url, err: err.message }, "local health request failed");
      } else if (ms > SLOW_MS)
        log.warn({ url, ms: Math.round(ms) }, "local health request took more than 1s");
    };
    const req = http.get(
      { host: t.host, port: t.port, path: "/health", timeout: TIMEOUT_MS, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => done(res.statusCode === 200 ? undefined : new Error(`status ${res.statusCode}`)));
        res.on("error", done);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no reply in ${TIMEOUT_MS} ms`)));
    req.on("error", done);
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
