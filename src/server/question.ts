// What the pipeline files a reply under and finishes it with: a question, from a client's scanned query
// or from an internal lookup's name.

import type { Msg } from "../dns/message.ts";
import type { Scanned } from "../dns/scan.ts";
import type { StoredAnswer } from "../answers/policy.ts";
import type { Block } from "./block.ts";
import type { Peer } from "./peer.ts";
import type { ReplySigner } from "./signed-query.ts";

/** What a stored reply is filed under and how it is finished: from the client's scanned query, or from
 * an internal lookup's name; and the block that answers it. */
export interface Question {
  key: Uint8Array;
  keyLength: number;
  hash: number;
  questionEnd: number;
  query: Msg;
  block: Block;
}

/** A client's query on the slow path: its own copies of the packet, scan and peer (the engine reuses
 * its), and what the chain's Request is made of. */
export interface ClientQuestion extends Question {
  readonly packet: Buffer;
  readonly scan: Scanned;
  readonly peer: Peer;
  /** The largest reply the client (and the block's bufsize) takes. */
  readonly maxSize: number;
  readonly zone: string;
  /** The store's entry for the question when the fast path could not replay it (AnswerPolicy.stored). */
  readonly stored: StoredAnswer | undefined;
  /** Octets written ahead of the last message (Request.stream over TCP). */
  streamed: number;
  /** Signs each message of the reply (a query signed with TSIG). */
  readonly signer: ReplySigner | undefined;
  /** The block's `trace` sampled it (Request.sampled). */
  readonly sampled?: boolean;
}
