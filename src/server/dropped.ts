// Queries no server block takes (nor view): the server answers them REFUSED before any plugin runs.
// CoreDNS still counts them in its per-query series, under zone "dropped" with no plugin, so a
// dashboard summing coredns_dns_responses_total by rcode sees them; so does clusterdns.

import type { Logger } from "pino";
import type { FinishedQuery } from "./finished-query.ts";
import { droppedQueries } from "../metrics/server-stats.ts";
import { Rcode } from "../dns/constants.ts";

/** The zones of the block they have none of: CoreDNS's zone label for them, "dropped" (no closing
 * dot: it names no zone). */
export const DROPPED_ZONES: readonly string[] = ["dropped"];

/** Counts one, when a prometheus plugin is set up: `done` filled with the query's side, `out` the
 * REFUSED to send, `start` its arrival. Returns `out`. */
export function countDropped(done: FinishedQuery, out: Buffer, start: number, log: Logger): Buffer {
  const record = droppedQueries.record;
  if (record === undefined) return out;
  done.header = (out[2] << 8) | out[3];
  done.micros = ((performance.now() - start) * 1000) | 0;
  done.rcode = Rcode.REFUSED;
  done.rsize = out.length;
  done.cached = false;
  done.plugin = "";
  try {
    record(done);
  } catch (err) {
    log.error({ err }, "finish hook failed");
  }
  return out;
}
