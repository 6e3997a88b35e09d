// A traced query's span, as the chain sees it (`trace`, src/plugins/trace): the contract only, so
// that neither the chain nor a plugin that adds a span (forward's upstream tries) loads a tracing
// library. A query not sampled has no span and pays nothing here.

export interface TraceSpan {
  /** A span under this one, started now; "client" for a call to another server. */
  child(name: string, kind?: "internal" | "client"): TraceSpan;
  tag(key: string, value: string | number): void;
  end(): void;
}
