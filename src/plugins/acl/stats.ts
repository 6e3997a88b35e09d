// acl's counters per server and zone, process-wide (they keep counting across reloads): plain numbers
// on the query path, named by metrics.ts at scrape time.

import type { Action } from "./policy.ts";

export type AclStats = Record<Action, number>;

/** "server zone" -> its counters. */
export const aclCounters = new Map<string, { server: string; zone: string; stats: AclStats }>();

export function aclStats(server: string, zone: string): AclStats {
  const key = `${server} ${zone}`;
  let c = aclCounters.get(key);
  if (c === undefined) {
    c = { server, zone, stats: { allow: 0, block: 0, filter: 0, drop: 0 } };
    aclCounters.set(key, c);
  }
  return c.stats;
}
