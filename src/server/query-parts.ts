// Small pieces of a query the pipeline works out on its slow path: the answer-store key of an internal
// lookup, an IXFR's authority section, and the UDP size a client gets.

import type { RR } from "../dns/message.ts";
import { decode } from "../dns/decode.ts";
import { latin1Bytes } from "../dns/key.ts";
import { wireKey } from "../dns/name.ts";
import { Class, EDNS_UDP_SIZE, PLAIN_UDP_SIZE } from "../dns/constants.ts";

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
