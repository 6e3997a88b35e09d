// One query over UDP and its reply, on a socket of its own: what the loop probe and `clusterdns resolve
// --explain` need, nothing more (no retries, no TCP; forward keeps pooled connections instead). Only a
// packet that matches the query (reply-match.ts) is taken.

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { Msg } from "../dns/message.ts";
import { encode } from "../dns/encode.ts";
import { asciiLower, matchReply } from "./reply-match.ts";
import type { Signer } from "./tsig-signer.ts";

/** Sends `query` (one question) to host:port and resolves with the reply, or undefined after
 * `timeoutMs`; rejects when the socket fails (unreachable, refused). With `signer` the query goes out
 * signed (TSIG) and a reply that does not verify rejects with an UnverifiedReply. */
export type Exchange = (
  host: string,
  port: number,
  query: Msg,
  timeoutMs: number,
  signer?: Signer,
) => Promise<Msg | undefined>;

/** The server answered a signed query, but its reply does not verify with the key (RFC 8945 5.3.3):
 * an error such as BADKEY, which comes unsigned, or a MAC that does not match. */
export class UnverifiedReply extends Error {
  readonly reply: Msg;
  constructor(reply: Msg, reason: string) {
    super(reason);
    this.name = "UnverifiedReply";
    this.reply = reply;
  }
}

export const udpExchange: Exchange = (host, port, query, timeoutMs, signer) =>
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
      if (!reply) return;
      const unverified = signer?.verify(pkt);
      done(unverified === undefined ? undefined : new UnverifiedReply(reply, unverified), reply);
    });
    const wire = encode(query);
    sock.send(signer ? signer.sign(wire) : wire, port, host, (err) => {
      if (err) done(err);
    });
  });
