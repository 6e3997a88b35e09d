// One query over UDP and its reply: what the loop probe needs, nothing more (no retries, no TCP).

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { Msg } from "../../dns/message.ts";
import { encode } from "../../dns/encode.ts";
import { decode } from "../../dns/decode.ts";

/** Sends `query` to host:port and resolves with the reply, or undefined after `timeoutMs`. */
export type Exchange = (
  host: string,
  port: number,
  query: Msg,
  timeoutMs: number,
) => Promise<Msg | undefined>;

export const udpExchange: Exchange = (host, port, query, timeoutMs) =>
  new Promise((resolve, reject) => {
    const sock = dgram.createSocket(isIPv6(host) ? "udp6" : "udp4");
    const done = (err: Error | undefined, reply?: Msg) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(reply);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on("error", (err) => done(err));
    sock.on("message", (buf) => {
      let reply: Msg;
      try {
        reply = decode(buf);
      } catch {
        return;
      }
      if (reply.id === query.id && reply.qr) done(undefined, reply);
    });
    sock.send(encode(query), port, host, (err) => {
      if (err) done(err);
    });
  });
