// Process-wide server counters, kept across reloads (read by the prometheus plugin).

import type { QueryDone } from "./query-done.ts";

export const serverStats = {
  /** Queries whose plugin chain threw: answered SERVFAIL by the top-level catch (coredns_panics_total). */
  panics: 0,
};

/** What `reload` has done, for coredns_reload_failed_total and coredns_reload_version_info. */
export const reloadStats = {
  failed: 0,
  succeeded: 0,
  /** sha512 of the Corefile that is serving, hex; "" when it did not come from a file. */
  hash: "",
};

/** Lookups in the answer caches (the fast path) of every pipeline, this one and the ones reloads
 * replaced: a hit is a reply sent without the plugin chain. `entries`: replies the caches of the
 * running configuration hold (each at most 100k). */
export const answerCacheStats = {
  hits: 0,
  misses: 0,
  entries: 0,
  /** Misses the wire lane answered in the same turn (the rest went through the plugin chain), and of
   * those, the ones `cache` refilled from the source copy without running the plugins after it. */
  lane: 0,
  refills: 0,
};

/** Queries of clients past their share of the server's CPU (src/server/client-costs.ts): deferred until
 * the client's credit was back, or refused (REFUSED) past the wait's bound. */
export const clientCostStats = { deferred: 0, refused: 0 };

/** The process's memory budget (src/server/memory-budget.ts): bytes (0: none), whether it is shedding
 * now (1) and how many times it shed. */
export const memoryStats = { budget: 0, shedding: 0, sheds: 0, refused: 0 };

/** The main thread's UDP sockets during watch storms (src/server/step-aside.ts): 1 while they are
 * aside, and how many times they stepped aside. */
export const stepAsideStats = { aside: 0, times: 0 };

/** Queries no server block takes, answered REFUSED before any plugin: CoreDNS counts them in its
 * per-query series under zone "dropped" (process-wide, whichever block has prometheus). `record` is set
 * by the first prometheus plugin set up. */
export const droppedQueries: { record?: (q: QueryDone) => void } = {};
