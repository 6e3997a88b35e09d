// A server block at run time: its zones, its plugin chain and its finish hooks.

import type { Handler } from "../chain/handler.ts";
import type { LaneStep } from "../answers/lane-step.ts";
import type { QueryDone } from "../metrics/query-done.ts";
import type { BlockSettings } from "../setup/block.ts";
import type { ServerKey } from "../corefile/types.ts";
import { isSubdomain } from "../dns/name.ts";

export interface Block extends BlockSettings {
  readonly keys: ServerKey[];
  readonly zones: string[];
  chain: Handler;
  /** Its handlers' wire-lane steps, in chain order (undefined where a handler has none: the lane stops
   * there); undefined when the first handler has none. */
  lane?: (LaneStep | undefined)[];
  readonly hooks: ((q: QueryDone) => void)[];
  /** The next block of the same zone and port (Corefile order), asked when this one has a view that
   * does not match the query. */
  otherwise?: Block;
  /** With a `view`, 1-255: the octet that keeps its replies apart in the answer store's keys
   * (ScannedQuery.keyView); 0 or unset without one. */
  viewKey?: number;
  /** Filled by `bind` during set-up; read-only once the block runs. */
  readonly bind: string[];
}

/** The zone of a block of several zones that `qname` is in, the longest when several hold it: the
 * `zone` label of CoreDNS's metrics (a block of one zone is labelled with it, and builds no name). */
export function zoneOf(zones: readonly string[], qname: string): string {
  let best = "";
  for (const z of zones) if (z.length > best.length && isSubdomain(qname, z)) best = z;
  return best || zones[0];
}
