// A server block at run time: its zones, its plugin chain and its finish hooks.

import type { Handler } from "../chain/handler.ts";
import type { LaneStep } from "../answers/lane-step.ts";
import type { QueryDone } from "../metrics/query-done.ts";
import type { BlockSettings } from "../setup/block.ts";
import type { ServerKey } from "../corefile/types.ts";

export interface Block extends BlockSettings {
  readonly keys: ServerKey[];
  readonly zones: string[];
  chain: Handler;
  /** Its handlers' wire-lane steps, in chain order (undefined where a handler has none: the lane stops
   * there); undefined when the first handler has none. */
  lane?: (LaneStep | undefined)[];
  readonly hooks: ((q: QueryDone) => void)[];
  /** Filled by `bind` during set-up; read-only once the block runs. */
  readonly bind: string[];
}
