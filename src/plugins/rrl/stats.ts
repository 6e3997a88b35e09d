// rrl's counters, this thread's (they keep counting across reloads; a scrape adds up the threads'),
// and the account tables alive now (for their size: the main thread's, which makes every table the
// threads share). Plain numbers on the query path; metrics.ts names them at scrape time.

import type { AccountTable } from "./accounts.ts";

export const rrlStats = {
  /** Responses over the limit that were not sent. */
  dropped: 0,
  /** Responses over the limit answered with an empty truncated reply instead. */
  slipped: 0,
  /** Responses over the limit sent anyway (report-only). */
  reported: 0,
};

/** The tables of the running configuration (and, for a moment, of the one a reload replaces), made
 * by this thread: on the main thread, every table of the process. */
export const liveTables = new Set<AccountTable>();
