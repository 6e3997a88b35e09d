// any: answers every ANY query with one synthesised HINFO record, as RFC 8482 4.2 allows, instead of
// every record at the name: an ANY query can no longer fetch a large reply for a small query, and
// the server does not look anything up for it.

import type { Handler } from "../../chain/handler.ts";
import type { Msg } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Type } from "../../dns/constants.ts";

/** The HINFO's TTL: CoreDNS's, which a client and a cache may keep as long as they like. */
export const HINFO_TTL = 8482;

// RFC 8482 4.2: CPU "RFC8482", OS empty, as two <character-string>s (RFC 1035 3.3.11).
const HINFO = Uint8Array.from([7, ...Buffer.from("RFC8482", "ascii"), 0]);

export function any(next: Handler): Handler {
  return {
    name: "any",
    serve(req) {
      if (req.qtype !== Type.ANY) return next.serve(req);
      req.answeredBy = "any";
      return Promise.resolve(answer(req.msg, req.qname, req.qclass));
    },
  };
}

function answer(query: Msg, name: string, qclass: number): Msg {
  const m = replyTo(query);
  const cls = qclass === Class.ANY ? Class.IN : qclass;
  m.answer = [{ name, type: Type.HINFO, class: cls, ttl: HINFO_TTL, data: { type: Type.HINFO, raw: HINFO } }];
  return m;
}
