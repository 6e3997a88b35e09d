// A Request as the server would hand it to a plugin, for unit tests that call a handler directly.

import { AnswerPolicy } from "../../src/answers/policy.ts";
import type { Handler } from "../../src/chain/handler.ts";
import type { Request } from "../../src/chain/request.ts";
import { Class, Rcode } from "../../src/dns/constants.ts";
import { canonical } from "../../src/dns/name.ts";
import { replyTo } from "../../src/dns/message.ts";
import { queryMsg } from "./query-msg.ts";

export interface RequestOptions {
  qclass?: number;
  zone?: string;
  proto?: "udp" | "tcp";
  remoteAddress?: string;
  remotePort?: number;
  do?: boolean;
  edns?: boolean;
}

export function makeRequest(name: string, qtype: number, o: RequestOptions = {}): Request {
  const qname = canonical(name);
  const qclass = o.qclass ?? Class.IN;
  const msg = queryMsg(qname, qtype, {
    id: 4242,
    qclass,
    edns: o.edns || o.do ? { udpSize: 1232, version: 0, do: o.do ?? false, options: [] } : undefined,
  });
  const proto = o.proto ?? "udp";
  return {
    msg,
    qname,
    qtype,
    qclass,
    zone: o.zone ?? ".",
    proto,
    remoteAddress: o.remoteAddress ?? "127.0.0.1",
    remotePort: o.remotePort ?? 40000,
    localAddress: "127.0.0.1",
    localPort: 53,
    server: "dns://:53",
    maxSize: proto === "tcp" ? 65535 : 1232,
    cache: new AnswerPolicy(),
  };
}

/** A next handler that records that it was called and answers with `rcode` (REFUSED by default, so a
 * test can tell "passed on" from "answered"). */
export function recordingNext(rcode: number = Rcode.REFUSED): Handler & { calls: Request[] } {
  const calls: Request[] = [];
  return {
    name: "recorder",
    calls,
    serve(req) {
      calls.push(req);
      return Promise.resolve(replyTo(req.msg, rcode));
    },
  };
}
