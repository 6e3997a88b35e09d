// The auto handler: answers from the zones its folder holds now, with file's answers; names of no
// zone loaded go to the next plugin.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { ZoneSet } from "../file/file.ts";
import { answerFromZone } from "../file/file.ts";

export function autoPlugin(zones: ZoneSet): Plugin {
  return (next): Handler => ({
    name: "auto",
    serve(req) {
      const zone = zones.match(req.qname);
      if (zone === undefined) return next.serve(req);
      req.answeredBy = "auto";
      return Promise.resolve(answerFromZone(req, zone));
    },
  });
}
