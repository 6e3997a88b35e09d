// Asking a primary: the serial of its SOA (over UDP, as RFC 1996 4.7 asks after a NOTIFY) and a
// zone transfer over TCP (AXFR, RFC 5936; IXFR, RFC 1995), read message by message until the
// closing SOA. What the messages hold is sorted out by ./stream.ts; this file moves octets.

import net from "node:net";
import { randomInt } from "node:crypto";
import type { Msg, RR } from "../../dns/message.ts";
import { newQuery } from "../../dns/message.ts";
import { decode } from "../../dns/decode.ts";
import { encode } from "../../dns/encode.ts";
import { FrameReader, tcpFrame } from "../../dns/tcp-frames.ts";
import { Rcode, Type, rcodeName } from "../../dns/constants.ts";
import { udpExchange } from "../../client/udp-exchange.ts";
import type { Signer } from "../../client/tsig-signer.ts";
import { TransferReader } from "./stream.ts";
import { PrimaryError } from "./primary-error.ts";
import type { Pulled } from "./stream.ts";

export interface Primary {
  host: string;
  port: number;
  /** "host:port", for logs. */
  to: string;
}

/** Time a primary has to answer a SOA query, and to send each message of a transfer. */
export const QUERY_TIMEOUT_MS = 3_000;
export const MESSAGE_TIMEOUT_MS = 10_000;

/** The serial of `zone`'s SOA at the primary. Throws PrimaryError when it does not answer with one. */
export async function primarySerial(
  p: Primary,
  zone: string,
  signer?: (() => Signer) | undefined,
): Promise<number> {
  const query = newQuery(zone, Type.SOA, 1, randomInt(0x10000));
  query.rd = false;
  const s = signer?.();
  let reply: Msg | undefined;
  if (s === undefined) {
    reply = await udpExchange(p.host, p.port, query, QUERY_TIMEOUT_MS).catch((err: Error) => {
      throw new PrimaryError(err.message);
    });
    if (reply === undefined) throw new PrimaryError(`no answer in ${QUERY_TIMEOUT_MS} ms`);
  }
  // Truncated or signed: over TCP, where one signed reply is read the way a transfer's first is.
  if (reply === undefined || reply.tc) reply = await tcpQuery(p, query, s);
  if (reply.rcode !== Rcode.NOERROR)
    throw new PrimaryError(`SOA query answered ${rcodeName(reply.rcode)}`, reply.rcode);
  const soa = reply.answer.find((rr) => rr.type === Type.SOA && rr.name.toLowerCase() === zone);
  if (soa === undefined || !("serial" in soa.data))
    throw new PrimaryError("SOA query answered without the zone's SOA");
  return soa.data.serial;
}

/** One query over TCP and its one reply. */
async function tcpQuery(p: Primary, query: Msg, signer: Signer | undefined): Promise<Msg> {
  let got: Msg | undefined;
  await exchange(p, query, signer, (m) => {
    got = m;
    return true;
  });
  return got!;
}

/**
 * Transfers `zone` from the primary: IXFR from `serial` when given (RFC 1995), else AXFR. A primary
 * that refuses IXFR or does not implement it is the caller's to ask again with AXFR (PrimaryError's
 * rcode says so).
 */
export async function pullZone(
  p: Primary,
  zone: string,
  o: { serial?: RR; signer?: () => Signer },
): Promise<Pulled> {
  const query = newQuery(zone, o.serial === undefined ? Type.AXFR : Type.IXFR, 1, randomInt(0x10000));
  query.rd = false;
  if (o.serial !== undefined) query.authority = [o.serial];
  const reader = new TransferReader(zone, o.serial);
  await exchange(p, query, o.signer?.(), (m) => reader.push(m));
  return reader.result();
}

/** Sends `query` over a new TCP connection and hands each reply to `onReply` until it returns true. */
function exchange(
  p: Primary,
  query: Msg,
  signer: Signer | undefined,
  onReply: (m: Msg) => boolean,
): Promise<void> {
  const wire = encode(query);
  const out = signer === undefined ? wire : signer.sign(wire);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: p.host, port: p.port });
    const frames = new FrameReader();
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      sock.destroy();
      if (err) reject(err);
      else resolve();
    };
    sock.setTimeout(MESSAGE_TIMEOUT_MS, () =>
      finish(new PrimaryError(`no message in ${MESSAGE_TIMEOUT_MS} ms`)),
    );
    sock.on("error", (err) => finish(new PrimaryError(err.message)));
    sock.on("close", () => finish(new PrimaryError("the primary closed the connection before the end")));
    sock.on("connect", () => sock.write(tcpFrame(out)));
    sock.on("data", (chunk) =>
      frames.push(chunk, (frame) => {
        if (done) return false;
        try {
          const m = decode(frame);
          if (m.id !== query.id || !m.qr) throw new PrimaryError("a message that answers another query");
          const bad = signer?.verify(Buffer.from(frame));
          if (bad !== undefined) throw new PrimaryError(bad);
          if (m.rcode !== Rcode.NOERROR) throw new PrimaryError(`answered ${rcodeName(m.rcode)}`, m.rcode);
          if (onReply(m)) finish();
        } catch (err) {
          finish(err instanceof PrimaryError ? err : new PrimaryError((err as Error).message));
        }
        return !done;
      }),
    );
  });
}
