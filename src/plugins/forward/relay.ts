// What forward and grpc send upstream for a client's query, and how the upstream's reply becomes the
// client's: the same for every transport.

import type { Msg } from "../../dns/message.ts";
import { EDNS_UDP_SIZE } from "../../dns/constants.ts";
import { wireRecords } from "../../dns/wire-msg.ts";
import { asciiLower } from "../../client/reply-match.ts";

/**
 * How long the pipeline's answer cache may replay a forwarded (or gRPC-relayed) reply. It replays the
 * encoded bytes as they are, TTLs included, so a forwarded answer would be served with TTLs that no
 * longer count down. One second keeps that error within the TTL field's own granularity while still
 * sparing the upstream the bursts of identical queries that ndots:5 search lists produce; longer
 * caching, with TTLs that decrease, is the cache plugin's job.
 */
export const FORWARD_MAX_AGE = 1;

/** What is sent upstream: the client's question and flags, a new ID (set per attempt), and our own
 * EDNS record with the client's DO bit and the options rewrite put in for the upstream. The client's
 * EDNS options (cookies, padding) are its own. */
export function upstreamQuery(q: Msg, options: readonly { code: number; data: Uint8Array }[]): Msg {
  return {
    id: 0,
    qr: false,
    opcode: q.opcode,
    aa: false,
    tc: false,
    rd: q.rd,
    ra: false,
    ad: q.ad,
    cd: q.cd,
    rcode: 0,
    question: q.question,
    answer: [],
    authority: [],
    additional: [],
    edns: { udpSize: EDNS_UDP_SIZE, version: 0, do: q.edns?.do ?? false, options: [...options] },
  };
}

/** The upstream's reply as this server's: the client's ID and question, without the upstream's EDNS.
 * Decoded records get lowercase owners (names inside the server are canonical); records still octets
 * are relayed as they came. */
export function forClient(reply: Msg, query: Msg): Msg {
  // Records nobody decoded keep the upstream's octets: their names are never read inside the server.
  if (wireRecords(reply) === undefined) lowerOwners(reply);
  reply.id = query.id;
  reply.question = query.question;
  // The upstream's EDNS options answer our query to it, not the client's.
  reply.edns = undefined;
  return reply;
}

function lowerOwners(reply: Msg): void {
  for (const section of [reply.answer, reply.authority, reply.additional]) {
    for (const rr of section) rr.name = asciiLower(rr.name);
  }
}
