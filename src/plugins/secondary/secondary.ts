// The secondary handler: answers from the zones it transferred, with file's answers; SERVFAIL for a
// zone not transferred yet or expired; and NOTIFY (RFC 1996) from a primary starts a check at once.

import type { Logger } from "pino";
import type { Handler, Plugin } from "../../chain/handler.ts";
import { failure } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Opcode, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { answerFromZone, chaseOutside, type Lookup } from "../file/file.ts";
import type { Transferer } from "../transfer/transferer.ts";
import type { SecondaryZone } from "./secondary-zone.ts";

export interface SecondaryOptions {
  /** Longest origin first. */
  zones: readonly SecondaryZone[];
  /** The primaries' addresses: the only senders whose NOTIFY is taken. */
  primaries: ReadonlySet<string>;
  log: Logger;
  /** Resolves CNAME targets outside the zone through the server, as file does. */
  lookup?: Lookup;
}

export function secondaryPlugin(o: SecondaryOptions): Plugin {
  return (next) => secondaryHandler(o, next);
}

export function secondaryHandler(o: SecondaryOptions, next: Handler): Handler {
  return {
    name: "secondary",
    serve(req) {
      const sz = o.zones.find((z) => isSubdomain(req.qname, z.origin));
      if (sz === undefined) return next.serve(req);
      req.answeredBy = "secondary";
      if (req.msg.opcode === Opcode.NOTIFY) return Promise.resolve(notify(req, sz, o));
      const zone = sz.serving;
      if (zone === undefined) return Promise.resolve(failure(req, Rcode.SERVFAIL));
      return chaseOutside(req, zone, answerFromZone(req, zone), o.lookup);
    },
  };
}

/** RFC 1996 3.7, 4.7: a NOTIFY for the zone's apex from one of its primaries is acknowledged and the
 * primary's SOA checked. One from anyone else is REFUSED (CoreDNS sends no reply), one for another
 * name NOTAUTH. */
function notify(req: Request, sz: SecondaryZone, o: SecondaryOptions): Msg {
  const from = unmapped(req.remoteAddress);
  if (!o.primaries.has(from)) {
    o.log.warn({ zone: sz.origin, client: from }, "NOTIFY refused: not from a primary of the zone");
    return failure(req, Rcode.REFUSED);
  }
  if (req.qname !== sz.origin || req.qtype !== Type.SOA) return failure(req, Rcode.NOTAUTH);
  o.log.info({ zone: sz.origin, client: from }, "NOTIFY received: checking the primary's serial");
  void sz.check();
  const reply = replyTo(req.msg, Rcode.NOERROR);
  reply.aa = true;
  return reply;
}

/** A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d. */
export function unmapped(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/** The zones as a source of outgoing transfers (transfer plugin): re-served to further secondaries. */
export function secondaryTransferer(zones: readonly SecondaryZone[]): Transferer {
  return {
    name: "secondary",
    zones: () => zones.map((z) => z.origin),
    transfer(origin) {
      const sz = zones.find((z) => z.origin === origin);
      if (sz === undefined) return undefined;
      const zone = sz.serving;
      if (zone === undefined) return { unavailable: "not transferred from a primary yet, or expired" };
      return { soa: zone.soa, records: () => zone.transferRecords() };
    },
  };
}
