// trace's OpenTelemetry side: a tracer provider per `trace` line, its spans batched and sent by the
// Zipkin exporter (Zipkin v2 JSON) or the OTLP/HTTP one (JSON). Loaded by setup.ts with a dynamic
// import, only for a Corefile that has `trace`: a server without it never loads these packages.

import type { Logger } from "pino";
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer as OtelTracer,
} from "@opentelemetry/api";
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { TraceSpan } from "../../chain/trace-span.ts";
import type { TraceConfig, Tracer } from "./trace.ts";
import { VERSION } from "../../version.ts";

/** How long a stop waits for the last spans to go (a receiver that is down must not hold a stop). */
const STOP_MS = 2000;
/** At most one line per this long about spans that could not be sent. */
const WARN_EVERY_MS = 60_000;

export async function startTracer(c: TraceConfig, log: Logger): Promise<Tracer> {
  const exporter = new Reporting(await exporterFor(c), c.url, log);
  const provider = new TracerProvider({
    // Which queries are traced is `every`'s decision (trace.ts); every span it opens is kept.
    sampler: new AlwaysOnSampler(),
    resource: resourceFromAttributes({ "service.name": c.service, "service.version": VERSION }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: c.backlog,
        maxExportBatchSize: c.batch,
        scheduledDelayMillis: c.intervalMs,
      }),
    ],
  });
  const tracer = provider.getTracer("clusterdns", VERSION);
  return {
    root: (name) => new OtelSpan(tracer, tracer.startSpan(name, { kind: SpanKind.SERVER }, ROOT_CONTEXT)),
    async stop() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((done) => (timer = setTimeout(done, STOP_MS, "late")));
      const how = await Promise.race([provider.shutdown().then(() => "sent" as const), late]);
      clearTimeout(timer);
      if (how === "late") log.warn({ to: c.url }, `spans not sent within ${STOP_MS} ms of the stop are lost`);
    },
  };
}

async function exporterFor(c: TraceConfig): Promise<SpanExporter> {
  if (c.kind === "zipkin") {
    const { ZipkinExporter } = await import("@opentelemetry/exporter-zipkin");
    return new ZipkinExporter({ url: c.url, serviceName: c.service });
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  return new OTLPTraceExporter({ url: c.url });
}

class OtelSpan implements TraceSpan {
  readonly #tracer: OtelTracer;
  readonly #span: Span;
  constructor(tracer: OtelTracer, span: Span) {
    this.#tracer = tracer;
    this.#span = span;
  }
  child(name: string, kind?: "internal" | "client"): TraceSpan {
    const parent = trace.setSpan(ROOT_CONTEXT, this.#span);
    const k = kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return new OtelSpan(this.#tracer, this.#tracer.startSpan(name, { kind: k }, parent));
  }
  tag(key: string, value: string | number): void {
    this.#span.setAttribute(key, value);
  }
  fail(why: string): void {
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message: why });
  }
  end(): void {
    this.#span.end();
  }
}

/** The exporter, with a line when spans could not be sent (a receiver down or slow): at most one a
 * minute, with how many were lost since the last. Answers never wait for it. */
class Reporting implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #to: string;
  readonly #log: Logger;
  #lost = 0;
  #warned = -Infinity;
  constructor(inner: SpanExporter, to: string, log: Logger) {
    this.#inner = inner;
    this.#to = to;
    this.#log = log;
  }
  export(spans: ReadableSpan[], done: Parameters<SpanExporter["export"]>[1]): void {
    this.#inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0.
      if (result.code !== 0) this.#failed(spans.length, result.error);
      done(result);
    });
  }
  #failed(n: number, err: Error | undefined): void {
    this.#lost += n;
    const now = performance.now();
    if (now - this.#warned < WARN_EVERY_MS) return;
    this.#warned = now;
    this.#log.warn(
      { to: this.#to, err, lost: this.#lost },
      "spans could not be sent; answers are not affected",
    );
    this.#lost = 0;
  }
  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
