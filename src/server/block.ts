// A server block at run time: its zones, its plugin chain and its finish hooks.

import type { Handler } from "../chain/handler.ts";
import type { LaneStep } from "../answers/lane-step.ts";
import type { QueryDone } from "../metrics/query-done.ts";
import type { ReplyLimiter, TcpTimeoutSettings } from "../setup/block.ts";
import type { ServerKey } from "../corefile/types.ts";

export interface Block {
  readonly keys: ServerKey[];
  readonly zones: string[];
  chain: Handler;
  /** Its handlers' wire-lane steps, in chain order (undefined where a handler has none: the lane stops
   * there); undefined when the first handler has none. */
  lane?: (LaneStep | undefined)[];
  readonly hooks: ((q: QueryDone) => void)[];
  /** Addresses from `bind`; empty means every address. */
  readonly bind: string[];
  /** The port of its first key as configured (BlockSettings.port). */
  readonly port?: number;
  /** Largest UDP reply, from `bufsize`; undefined for the client's own size (up to 1232). */
  udpSize?: number;
  /** TCP time limits from `timeouts`. */
  timeouts?: TcpTimeoutSettings;
  /** The response-rate limit of its UDP replies, from `rrl`; undefined (the fast path's one check)
   * without. */
  rrl?: ReplyLimiter;
  /** The block's directive names, in execution order (for coredns_plugin_enabled). */
  readonly directives: readonly string[];
  readonly shared: Map<string, unknown>;
}
