// The transfer handler: AXFR (RFC 5936) and IXFR (RFC 1995) of the zones its sources hold, to the
// clients its `to` lines name. IXFR gets the single current SOA when the client's serial is current
// (section 4) or the query came over UDP (section 2: a reply that does not fit says "ask over TCP");
// the differences from the client's version when the source keeps them (file and auto zones: their
// journal); else the whole zone as AXFR sends it (section 4: "the entire zone is returned").
//
// A zone goes out as a stream of messages (Request.stream), each filled to MESSAGE_BUDGET octets at
// most, from the source's records as it produces them: memory holds one message, never the zone.

import type { Logger } from "pino";
import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import { PASS_ALL } from "../../answers/lane-step.ts";
import { failure } from "../../chain/handler.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { rrSizeBound } from "../../dns/rr-size.ts";
import type { Secondaries } from "./secondaries.ts";
import type { Transferer, ZoneChange, ZoneTransfer } from "./transferer.ts";

/** Octets of records per message, counted uncompressed: with the header, question, OPT and a closing
 * SOA a message stays far under the 65535 that TCP framing allows (RFC 5936 2.2), and compression
 * makes the real one about 5 KB. Each message is made in one turn of the event loop, so its size is
 * how long a query may wait behind it: at 10k services, UDP queries asked during a transfer waited
 * p50 3.0 ms with 32 KiB, 0.8 ms with 8 KiB, for the same transfer time (0.6 s). */
export const MESSAGE_BUDGET = 8 * 1024;

export interface TransferOptions {
  /** The stanza's zones (canonical): transfers of other names pass on. */
  zones: readonly string[];
  to: Secondaries;
  /** The block's transferers, in chain order (read when a transfer comes: they register in setup). */
  sources: () => readonly Transferer[];
  log: Logger;
}

export function transferPlugin(o: TransferOptions): Plugin {
  return (next) => transferHandler(o, next);
}

export function transferHandler(o: TransferOptions, next: Handler): Handler {
  return {
    name: "transfer",
    // The pipeline sends no transfer down the lane.
    lane: PASS_ALL,
    serve(req) {
      if (req.qtype !== Type.AXFR && req.qtype !== Type.IXFR) return next.serve(req);
      if (!o.zones.some((z) => isSubdomain(req.qname, z))) return next.serve(req);
      req.answeredBy = "transfer";
      // A transfer's reply depends on who asks and, for IXFR, on the serial the client sent.
      req.cache.private = true;
      if (!o.to.allows(req.remoteAddress)) {
        o.log.debug({ zone: req.qname, client: req.remoteAddress }, "transfer refused: not in 'to'");
        return Promise.resolve(failure(req, Rcode.REFUSED));
      }
      // RFC 5936 4.2 leaves AXFR over UDP undefined (RFC 1035 4.2.1: not acceptable): refused, as
      // CoreDNS does.
      if (req.qtype === Type.AXFR && req.proto !== "tcp") return Promise.resolve(failure(req, Rcode.REFUSED));
      let clientSerial: number | undefined;
      if (req.qtype === Type.IXFR) {
        // RFC 1995 3: the authority section holds the SOA of the client's version.
        const soa = req.msg.authority.find((rr) => rr.type === Type.SOA && rr.name === req.qname);
        if (soa === undefined || !("serial" in soa.data)) return Promise.resolve(failure(req, Rcode.FORMERR));
        clientSerial = soa.data.serial;
      }
      const offer = find(o.sources(), req.qname);
      // RFC 5936 2.2.1: NotAuth for a name that is no zone apex we hold.
      if (offer === undefined) return Promise.resolve(failure(req, Rcode.NOTAUTH));
      if ("unavailable" in offer) {
        o.log.warn({ zone: req.qname, client: req.remoteAddress, why: offer.unavailable }, "transfer failed");
        return Promise.resolve(failure(req, Rcode.SERVFAIL));
      }
      const serial = (offer.soa.data as { serial: number }).serial;
      if (clientSerial !== undefined && (req.stream === undefined || !newer(serial, clientSerial))) {
        return Promise.resolve(message(req, [offer.soa]));
      }
      if (req.stream === undefined) return Promise.resolve(failure(req, Rcode.REFUSED));
      const changes = clientSerial === undefined ? undefined : offer.changes?.(clientSerial);
      if (changes !== undefined) return send(req, req.stream, incremental(offer.soa, changes), o.log);
      return send(req, req.stream, offer, o.log);
    },
  };
}

/** The first source that holds `zone`. */
function find(sources: readonly Transferer[], zone: string) {
  for (const t of sources) {
    const offer = t.transfer(zone);
    if (offer !== undefined) return offer;
  }
  return undefined;
}

/** An IXFR's body (RFC 1995 4): for each change, the old SOA, the records it removed, the new SOA,
 * the records it added; `send` puts the current SOA before and after. */
function incremental(soa: RR, changes: readonly ZoneChange[]): ZoneTransfer & { ixfr: true } {
  return {
    soa,
    ixfr: true,
    *records() {
      for (const c of changes) {
        yield [c.from];
        yield c.removed;
        yield [c.to];
        yield c.added;
      }
    },
  };
}

/** Streams the zone: SOA, records, SOA (RFC 5936 2.2), every message but the last through `stream`;
 * the last is the handler's reply. An IXFR's differences go out the same way. */
async function send(
  req: Request,
  stream: (m: Msg) => Promise<boolean>,
  zone: ZoneTransfer & { ixfr?: true },
  log: Logger,
): Promise<Msg> {
  const started = performance.now();
  let batch: RR[] = [zone.soa];
  let size = rrSizeBound(zone.soa);
  let records = 1;
  let messages = 0;
  const flush = async () => {
    messages++;
    const ok = await stream(message(req, batch));
    batch = [];
    size = 0;
    return ok;
  };
  for (const chunk of zone.records()) {
    for (const rr of chunk) {
      const n = rrSizeBound(rr);
      if (size + n > MESSAGE_BUDGET && batch.length > 0 && !(await flush())) {
        log.info({ zone: req.qname, client: req.remoteAddress, records }, "transfer ended: the client left");
        return failure(req, Rcode.SERVFAIL);
      }
      batch.push(rr);
      size += n;
      records++;
    }
  }
  batch.push(zone.soa);
  records++;
  log.info(
    {
      zone: req.qname,
      client: req.remoteAddress,
      serial: (zone.soa.data as { serial: number }).serial,
      how: zone.ixfr ? "IXFR" : "AXFR",
      records,
      messages: messages + 1,
      ms: Math.round(performance.now() - started),
    },
    "outgoing transfer",
  );
  return message(req, batch);
}

function message(req: Request, answer: RR[]): Msg {
  const m = replyTo(req.msg, Rcode.NOERROR);
  m.aa = true;
  m.answer = answer;
  return m;
}

/** RFC 1982 serial arithmetic: true when `a` is newer than `b`. */
export function newer(a: number, b: number): boolean {
  const d = (a - b) >>> 0;
  return d !== 0 && d < 0x80000000;
}
