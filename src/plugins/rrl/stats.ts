// rrl's counters, process-wide (they keep counting across reloads), and the limiters alive now (for
// the size of their tables). Plain numbers on the query path; metrics.ts names them at scrape time.

export const rrlStats = {
  /** Responses over the limit that were not sent. */
  dropped: 0,
  /** Responses over the limit answered with an empty truncated reply instead. */
  slipped: 0,
  /** Responses over the limit sent anyway (report-only). */
  reported: 0,
};

/** The limiters of the running configuration (and, for a moment, of the one a reload replaces). */
export const liveLimiters = new Set<{ readonly accounts: number }>();
