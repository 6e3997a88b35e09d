// trace: the handler that opens a sampled query's span. The block's other handlers get theirs from
// the wrapper around each `next` (src/chain/spanning-next.ts), forward its upstream tries; which
// queries are sampled is the pipeline's question to the block (BlockSettings.trace), so a query not
// sampled passes here with one property read.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import { RCODE_TAG, type TraceSpan } from "../../chain/trace-span.ts";
import type { BlockTrace } from "../../setup/block.ts";
import { PASS_ALL } from "../../answers/lane-step.ts";
import { Rcode, rcodeName, typeName } from "../../dns/constants.ts";

export const NAME = "trace";

export interface TraceConfig {
  kind: "zipkin" | "otlp";
  /** Where spans are POSTed. */
  url: string;
  /** One query in `every` is traced; 0: none. */
  every: number;
  /** The service name spans carry. */
  service: string;
  /** Spans that may wait to be sent; past it new ones are dropped (zipkin_max_backlog_size). */
  backlog: number;
  /** Spans sent in one request at most (zipkin_max_batch_size). */
  batch: number;
  /** The longest a span waits before it is sent (zipkin_max_batch_interval), ms. */
  intervalMs: number;
}

/** Where spans go (./otel.ts): a query's root span, and a stop that sends what is left. */
export interface Tracer {
  root(name: string): TraceSpan;
  stop(): Promise<void>;
}

/** The span's tags: CoreDNS's five, and two of clusterdns's own. */
export const TAG = {
  name: "coredns.io/name",
  type: "coredns.io/type",
  proto: "coredns.io/proto",
  remote: "coredns.io/remote",
  rcode: RCODE_TAG,
  zone: "clusterdns.io/zone",
  plugin: "clusterdns.io/plugin",
} as const;

export function tracePlugin(tracer: Tracer): Plugin {
  return (next) => ({
    name: NAME,
    // Sampled queries never take the lane: the pipeline sends them down the chain.
    lane: PASS_ALL,
    serve(req) {
      if (req.sampled !== true || req.span !== undefined) return next.serve(req);
      return traced(tracer, next, req);
    },
  });
}

async function traced(tracer: Tracer, next: Handler, req: Request) {
  // CoreDNS's name: "servedns:" with the server and the question's name.
  const span = tracer.root(`servedns:${req.server} ${req.qname}`);
  req.span = span;
  let rcode: number = Rcode.SERVFAIL;
  try {
    const reply = await next.serve(req);
    rcode = reply.rcode;
    return reply;
  } finally {
    req.span = undefined;
    span.tag(TAG.name, req.qname);
    span.tag(TAG.type, typeName(req.qtype));
    span.tag(TAG.proto, req.proto);
    span.tag(TAG.remote, req.remoteAddress);
    span.tag(TAG.rcode, rcodeName(rcode));
    span.tag(TAG.zone, req.zone);
    span.tag(TAG.plugin, req.answeredBy ?? "");
    span.end();
  }
}

/** CoreDNS's `every N`: the Nth query of the block, the 2Nth, ...; 0 traces none. */
export function everyNth(every: number): BlockTrace {
  if (every === 0) return { sample: () => false };
  let count = 0;
  return {
    sample() {
      if (++count < every) return false;
      count = 0;
      return true;
    },
  };
}
