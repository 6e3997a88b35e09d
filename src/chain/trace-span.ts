// A traced query's span, as the chain sees it (`trace`, src/plugins/trace): the contract only, so
// that neither the chain nor a plugin that adds a span (forward's upstream tries) loads a tracing
// library. A query not sampled has no span and pays nothing here.

/** The tag of a reply's rcode (`NOERROR`, ...): on the query's span, and on an upstream try's. */
export const RCODE_TAG = "coredns.io/rcode";

export interface TraceSpan {
  /** A span under this one, started now; "client" for a call to another server. */
  child(name: string, kind?: "internal" | "client"): TraceSpan;
  tag(key: string, value: string | number): void;
  /** Marks the span as failed (OpenTelemetry's error status), with why. */
  fail(why: string): void;
  end(): void;
}
