// Whether another process already serves a port this one is about to share (-reuseport): one SOA
// query for a zone the port answers, sent before this process binds, so only a peer can reply. A reply
// other than SERVFAIL means the peer answers that zone from synced data; silence, a refused send or a
// SERVFAIL mean no peer serves it (one that is itself waiting for its API answers SERVFAIL).

import { randomInt } from "node:crypto";
import { udpExchange } from "../client/udp-exchange.ts";
import { newQuery } from "../dns/message.ts";
import { Rcode, Type } from "../dns/constants.ts";

/** Three tries of a second: a peer under load answers within that, and a wrong "no" costs SERVFAIL. */
const TRIES = 3;
const TIMEOUT_MS = 1000;

export async function peerServes(address: string, port: number, zone: string): Promise<boolean> {
  for (let i = 0; i < TRIES; i++) {
    const query = newQuery(zone, Type.SOA, 1, randomInt(65536));
    try {
      const reply = await udpExchange(address, port, query, TIMEOUT_MS);
      if (reply !== undefined) return reply.rcode !== Rcode.SERVFAIL;
    } catch {
      return false;
    }
  }
  return false;
}
