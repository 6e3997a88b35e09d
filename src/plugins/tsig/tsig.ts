// The tsig handler: the server has checked a signed query and signs its replies (src/server/
// signed-query.ts); what is left here is `require`: an unsigned query of a type that must be signed
// is REFUSED, as CoreDNS does. It has no wire-lane step, so the lane stops before it and every query
// of its zones meets this check.

import type { Handler, Plugin } from "../../chain/handler.ts";
import { failure } from "../../chain/handler.ts";
import { Rcode } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";

export interface TsigOptions {
  zones: readonly string[];
  /** The query types that must be signed; "all" for every type. */
  require: ReadonlySet<number> | "all";
}

export function tsigPlugin(o: TsigOptions): Plugin {
  return (next): Handler => ({
    name: "tsig",
    serve(req) {
      if (req.tsig !== undefined || !o.zones.some((z) => isSubdomain(req.qname, z))) return next.serve(req);
      if (o.require === "all" || o.require.has(req.qtype)) {
        req.answeredBy = "tsig";
        return Promise.resolve(failure(req, Rcode.REFUSED));
      }
      return next.serve(req);
    },
  });
}
