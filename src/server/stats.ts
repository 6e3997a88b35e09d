// Process-wide server counters, kept across reloads (read by the prometheus plugin).

export const serverStats = {
  /** Queries whose plugin chain threw: answered SERVFAIL by the top-level catch (coredns_panics_total). */
  panics: 0,
};
