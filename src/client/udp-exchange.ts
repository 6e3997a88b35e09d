// One query over UDP and its reply, on a socket of its own: what the loop probe and `clusterdns resolve
// --explain` need, nothing more (no retries, no TCP; forward keeps pooled connections instead). Only a
// packet that matches the query (reply-match.ts) is taken.

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { Msg } from "../dns/message.ts";
import { encode } from "../dns/encode.ts";
import { asciiLower, matchReply } from "./reply-match.ts";

/** Sends `query` (one question) to host:port and resolves with the reply, or undefined after
 * `timeoutMs`; rejects when the socket fails (unreachable, refused). */
export type Exchange = (
  host: string,
  port: number,
  query: Msg,
  timeoutMs: number,
) => Promise<Msg | undefined>;

export const udpExchange: Exchange = (host, port, query, timeoutMs) =>
  new Promise((resolve, reject) => {
    const q = query.question[0];
    const expect = { id: query.id, name: asciiLower(q.name), type: q.type, class: q.class };
    const sock = dgram.createSocket(isIPv6(host) ? "udp6" : "udp4");
    const done = (err: Error | undefined, reply?: Msg) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(reply);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on("error", (err) => done(err));
    sock.on("message", (pkt) => {
      const reply = matchReply(pkt, expect);
      if (reply) done(undefined, reply);
    });
    sock.send(encode(query), port, host, (err) => {
      if (err) done(err);
    });
  });
