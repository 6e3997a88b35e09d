// trace [ENDPOINT-TYPE] [ENDPOINT] {
//     every AMOUNT
//     service NAME
//     client_server [BOOL]
//     zipkin_max_backlog_size SIZE
//     zipkin_max_batch_size SIZE
//     zipkin_max_batch_interval DURATION
// }
// ENDPOINT-TYPE: zipkin (the default) or otlp (clusterdns's: OTLP over HTTP); CoreDNS's datadog and
// datadog_analytics_rate are refused at their line. The OpenTelemetry packages are imported here, at
// set-up, and only when a Corefile has `trace` (./otel.ts).

import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import { argCount, ignoredOption, parseIntArg, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { NAME, everyNth, tracePlugin, type TraceConfig } from "./trace.ts";

/** CoreDNS's defaults; OTLP/HTTP's usual port and path for otlp. */
const DEFAULT_ENDPOINT = { zipkin: "localhost:9411", otlp: "localhost:4318" } as const;
const DEFAULT_PATH = { zipkin: "/api/v2/spans", otlp: "/v1/traces" } as const;

export const setup: Setup = async (d, ctx) => {
  const log = ctx.log(NAME);
  const c = parseTrace(d, (opt, why) => ignoredOption(opt, log, why));
  if (ctx.block.trace !== undefined) throw configError(d, NAME, "only one 'trace' per server block");
  ctx.block.trace = everyNth(c.every);
  const { startTracer } = await import("./otel.ts");
  const tracer = await startTracer(c, log);
  ctx.onShutdown(() => tracer.stop());
  return tracePlugin(tracer);
};

/** The directive's settings, checked; every mistake is a ConfigError at its file:line. `ignored`
 * says why an accepted option does nothing. */
export function parseTrace(
  d: Directive,
  ignored: (opt: Directive, why: string) => void = () => {},
): TraceConfig {
  argCount(d, NAME, 0, 2);
  const [first, second] = d.args;
  // As CoreDNS: one argument is the endpoint (of zipkin), two are the type and the endpoint.
  const kind = second === undefined ? "zipkin" : endpointType(first);
  const ep = second ?? first;
  const c: TraceConfig = {
    kind,
    url: endpointUrl(kind, ep),
    every: 1,
    service: "coredns",
    backlog: 1000,
    batch: 100,
    intervalMs: 1000,
  };
  let batchAt: Directive | undefined;
  for (const opt of d.block ?? []) {
    if (opt.block) throw configError(opt, NAME, `'${opt.name}' takes no block`);
    switch (opt.name) {
      case "every":
        argCount(opt, NAME, 1, 1);
        c.every = parseIntArg(opt.args[0], NAME, 0, Number.MAX_SAFE_INTEGER);
        break;
      case "service":
        argCount(opt, NAME, 1, 1);
        c.service = opt.args[0].text;
        break;
      case "client_server":
        argCount(opt, NAME, 0, 1);
        if (opt.args.length === 0 || goBool(opt.args[0]))
          ignored(opt, "OpenTelemetry has no shared client/server spans: every span has an ID of its own");
        break;
      case "datadog_analytics_rate":
        throw configError(
          opt,
          NAME,
          "'datadog_analytics_rate' is not supported: it is the datadog endpoint's",
        );
      // CoreDNS lets these go without an argument (the default stays).
      case "zipkin_max_backlog_size":
        argCount(opt, NAME, 0, 1);
        if (opt.args[0] !== undefined) c.backlog = parseIntArg(opt.args[0], NAME, 1, 1_000_000);
        break;
      case "zipkin_max_batch_size":
        argCount(opt, NAME, 0, 1);
        if (opt.args[0] !== undefined) c.batch = parseIntArg(opt.args[0], NAME, 1, 1_000_000);
        batchAt = opt;
        break;
      case "zipkin_max_batch_interval":
        argCount(opt, NAME, 0, 1);
        if (opt.args[0] !== undefined) c.intervalMs = parseTimerDuration(opt.args[0], NAME);
        if (c.intervalMs <= 0) throw configError(opt, NAME, "zipkin_max_batch_interval must be more than 0");
        break;
      default:
        throw configError(opt, NAME, `unknown property '${opt.name}'`);
    }
  }
  if (c.batch > c.backlog)
    throw configError(
      batchAt ?? d,
      NAME,
      `a batch of ${c.batch} spans cannot exceed the backlog of ${c.backlog}`,
    );
  return c;
}

function endpointType(t: Token): "zipkin" | "otlp" {
  const type = t.text.toLowerCase();
  if (type === "zipkin" || type === "otlp") return type;
  if (type === "datadog")
    throw configError(
      t,
      NAME,
      "endpoint type 'datadog' is not supported: the Datadog Agent's trace port (8126) speaks Datadog's own protocol, which the OpenTelemetry packages do not; send to the Agent's OTLP intake instead (trace otlp http://AGENT:4318/v1/traces, with OTLP ingest on in the Agent)",
    );
  throw configError(t, NAME, `unknown endpoint type '${t.text}' (want zipkin or otlp)`);
}

/** ENDPOINT as CoreDNS reads it: one with "http" in it is the URL; else HOST:PORT, which gets the
 * type's usual path. */
function endpointUrl(kind: "zipkin" | "otlp", t: Token | undefined): string {
  if (t === undefined) return `http://${DEFAULT_ENDPOINT[kind]}${DEFAULT_PATH[kind]}`;
  const isUrl = t.text.includes("http");
  const url = isUrl ? t.text : `http://${t.text}${DEFAULT_PATH[kind]}`;
  let parsed: URL;
  try {
    if (!isUrl && t.text.includes("/")) throw new Error("a path without a scheme");
    parsed = new URL(url);
  } catch {
    throw configError(t, NAME, `'${t.text}' is not HOST:PORT or a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw configError(t, NAME, `'${t.text}': spans go over http:// or https://`);
  return url;
}

/** Go's strconv.ParseBool, which CoreDNS reads client_server's argument with. */
function goBool(t: Token): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(t.text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(t.text)) return false;
  throw configError(t, NAME, `'${t.text}' is not a boolean`);
}
