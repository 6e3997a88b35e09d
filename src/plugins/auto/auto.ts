// The auto handler: answers from the zones its folder holds now, with file's answers; names of no
// zone loaded go to the next plugin.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Lookup, ZoneSet } from "../file/file.ts";
import { answerFromZone, chaseOutside } from "../file/file.ts";

export function autoPlugin(zones: ZoneSet, lookup?: Lookup): Plugin {
  return (next): Handler => ({
    name: "auto",
    serve(req) {
      const zone = zones.match(req.qname);
      if (zone === undefined) return next.serve(req);
      req.answeredBy = "auto";
      return chaseOutside(req, zone, answerFromZone(req, zone), lookup);
    },
  });
}
