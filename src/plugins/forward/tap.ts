// What forward tells a tap (dnstap) of each query it sent upstream. forward owns this interface; a
// plugin that wants to hear offers itself under FORWARD_TAPS in the block (src/plugins/offers.ts),
// before forward is set up (it comes earlier in the chain), and neither imports the other's code.

import type { Msg } from "../../dns/message.ts";
import type { Proto } from "./conn.ts";
import { OfferKey } from "../offers.ts";

/** One try of a forwarded query: sent to an upstream, answered or not. */
export interface ForwardExchange {
  /** The client whose query this forwards (CoreDNS reports its address as the query's). */
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly upstreamHost: string;
  readonly upstreamPort: number;
  /** How the query went upstream. */
  readonly proto: Proto;
  /** The query as forward built it (the upstream try gives it a random ID and 0x20 case). */
  readonly query: Msg;
  /** The upstream's reply, or undefined when none came. */
  readonly reply: Msg | undefined;
  /** Date.now() when the try began. */
  readonly startedMs: number;
}

export interface ForwardTap {
  forwarded(e: ForwardExchange): void;
}

/** The taps of a block, in Corefile order; forward calls each after every try. */
export const FORWARD_TAPS = new OfferKey<ForwardTap[]>("forward:taps");
