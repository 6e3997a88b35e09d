// What the pipeline's fast path carries from one step to the next for the query of this turn.

import type { ReplayFor } from "../answers/replay.ts";
import type { Peer } from "./peer.ts";

/** The query of this turn on the fast path, as #answer hands it on to #replay (and replayInto): one per
 * pipeline, filled anew for every query (nothing allocated), never kept past the turn. */
export class Turn implements ReplayFor {
  /** The packet: packet[0..length) is the query. */
  packet: Buffer = Buffer.alloc(0);
  length = 0;
  questionEnd = 0;
  peer: Peer | undefined = undefined;
  /** The largest reply the client takes. */
  maxSize = 0;
  /** Where the reply goes: out[at..], or, when out is undefined, a Buffer of its own (#out). */
  out: Buffer | undefined = undefined;
  at = 0;
  /** The TTL the replay writes into every record, AS_STORED (-1) to leave them. */
  ttl = -1;
  /** The client set AD or DO: a stored AD bit may reach it (RFC 6840 5.7-5.8). */
  adWanted = false;
}
