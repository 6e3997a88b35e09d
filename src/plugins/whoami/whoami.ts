// whoami: tells a client what the server saw of it. The answer section stays empty; the additional
// section holds the client's address (A or AAAA) and an SRV `_<proto>.<qname>` carrying its port.
// Class IN only: an A record of class CH is a Chaosnet address (RFC 1035 3.4.1), a name and 16 bits,
// so a CH query passes on (and ends REFUSED, see endOfChain).

import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { nameToWire } from "../../dns/name.ts";
import { Class, Type } from "../../dns/constants.ts";

/** Answers every query of class IN or ANY that reaches it; others go to `next`. */
export function whoami(next: Handler): Handler {
  return {
    name: "whoami",
    serve(req) {
      if (req.qclass !== Class.IN && req.qclass !== Class.ANY) return next.serve(req);
      return Promise.resolve(answer(req));
    },
  };
}

export function answer(req: Request): Msg {
  const m = replyTo(req.msg);
  m.aa = true;
  const name = req.qname;
  const cls = Class.IN;
  // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d; CoreDNS answers those with an A.
  const ip = req.remoteAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  const addr: RR = ip.includes(":")
    ? { name, type: Type.AAAA, class: cls, ttl: 0, data: { type: Type.AAAA, address: ip } }
    : { name, type: Type.A, class: cls, ttl: 0, data: { type: Type.A, address: ip } };
  const srvName = `_${req.proto}.${name === "." ? "" : name}`;
  const srv: RR = {
    name: srvName,
    type: Type.SRV,
    class: cls,
    ttl: 0,
    data: { type: Type.SRV, priority: 0, weight: 0, port: req.remotePort, target: "." },
  };
  // A name over 250 octets leaves no room for the _udp./_tcp. label (255 in all): the address alone.
  m.additional = typeof nameToWire(srvName) === "string" ? [addr] : [addr, srv];
  // The reply depends on who asked: never replay it to someone else.
  req.cache.private = true;
  req.answeredBy = "whoami";
  return m;
}
