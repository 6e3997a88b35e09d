// Small pieces of a query the pipeline works out on its slow path: the answer-store key of an internal
// lookup, an IXFR's authority section, the size of reply a client gets, the client's address family,
// and what every reply gets whatever the plugins did.

import { replyTo, type Msg, type RR } from "../dns/message.ts";
import { encode } from "../dns/encode.ts";
import type { Scanned } from "../dns/scan.ts";
import { decode } from "../dns/decode.ts";
import { latin1Bytes } from "../dns/key.ts";
import { wireKey } from "../dns/name.ts";
import { Class, EDNS_UDP_SIZE, PLAIN_UDP_SIZE, Rcode } from "../dns/constants.ts";

/** The answer-store key of a query without EDNS for a canonical name (see Scanned.keyBytes). */
export function lookupKey(name: string, qtype: number): Uint8Array {
  return latin1Bytes(wireKey(name) + String.fromCharCode(qtype >> 8, qtype & 0xff, 0, Class.IN) + "0");
}

/** The authority section of a query the scan passed; empty if it does not decode after all. */
export function authorityOf(buf: Buffer): RR[] {
  try {
    return decode(buf).authority;
  } catch {
    return [];
  }
}

/** UDP payload we send to an EDNS client: its size, at least 512, at most what we advertise. Capping
 * at 1232 avoids IP fragmentation on overlay networks (DNS flag day 2020). */
export function clampUdp(size: number): number {
  return Math.max(PLAIN_UDP_SIZE, Math.min(size, EDNS_UDP_SIZE));
}

/** The largest reply the client takes over its transport. */
export function maxSizeOf(s: { readonly udpSize: number }, peer: { readonly proto: string }): number {
  return peer.proto === "tcp" ? 65535 : s.udpSize > 0 ? clampUdp(s.udpSize) : PLAIN_UDP_SIZE;
}

/** An IPv4 address, or one mapped into IPv6 as a dual-stack socket reports it. */
export function isIPv4Client(address: string): boolean {
  return !address.includes(":") || address.startsWith("::ffff:");
}

/** What every reply gets whatever the plugin did: the query's ID and question, QR, and our EDNS, with
 * the options the plugins put in the reply (nsid's identifier). */
export function normalise(reply: Msg, query: Msg): void {
  reply.id = query.id;
  reply.qr = true;
  reply.opcode = query.opcode;
  reply.rd = query.rd;
  reply.cd = query.cd;
  reply.question = query.question;
  if (query.edns) {
    const options = reply.edns?.options ?? [];
    reply.edns = { udpSize: EDNS_UDP_SIZE, version: 0, do: query.edns.do, options };
  } else {
    reply.edns = undefined;
    if (reply.rcode > 15) reply.rcode = Rcode.SERVFAIL;
  }
}

/** A reply with only an rcode, for queries no block may answer: header, question (the client's
 * octets, `buf`'s) and OPT, which always fit 512 octets. */
export function simpleReply(buf: Buffer, s: Scanned, query: Msg, rcode: number): Buffer {
  const reply = replyTo(query, rcode);
  normalise(reply, query);
  const out = encode(reply);
  buf.copy(out, 12, 12, s.questionEnd);
  return out;
}
