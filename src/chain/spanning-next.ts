// `next` as a plugin of a block with `trace` sees it (src/server/instance.ts wraps each one).

import type { Handler } from "./handler.ts";
import type { Request } from "./request.ts";
import type { TraceSpan } from "./trace-span.ts";

/** A query with a span gets a child span named after the handler it passes to, for as long as that
 * handler (and all it calls) takes, as CoreDNS's NextOrFailure opens one; a query without a span
 * (not sampled) goes straight through. */
export function spanningNext(next: Handler): Handler {
  return {
    name: next.name,
    lane: next.lane,
    serve(req: Request) {
      const parent = req.span;
      if (parent === undefined) return next.serve(req);
      return servedInSpan(next, req, parent);
    },
  };
}

async function servedInSpan(next: Handler, req: Request, parent: TraceSpan) {
  const span = parent.child(next.name);
  req.span = span;
  try {
    return await next.serve(req);
  } finally {
    req.span = parent;
    span.end();
  }
}
