// minimal: keeps only what a client asked for in a positive answer. A NOERROR reply with records in
// its answer section loses its authority and additional sections (the name servers of the zone, the
// addresses of SRV and MX targets), which makes replies smaller and keeps them within 512 octets more
// often. Denials (NXDOMAIN, NODATA: their SOA is what lets a resolver cache them, RFC 2308),
// referrals (their NS records and glue are the answer) and errors are left whole.

import type { Handler } from "../../chain/handler.ts";
import { Rcode } from "../../dns/constants.ts";

export function minimal(next: Handler): Handler {
  return {
    name: "minimal",
    async serve(req) {
      const reply = await next.serve(req);
      if (reply.rcode === Rcode.NOERROR && reply.answer.length > 0) {
        reply.authority = [];
        reply.additional = [];
      }
      return reply;
    },
  };
}
