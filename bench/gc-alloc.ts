// Bytes a Node process allocates on its JS heap, read from outside the code under test: the process
// runs with --trace-gc-nvp, and V8 prints a line per collection whose `allocated=N` is what was
// allocated since the previous collection ended (its start_object_size less the previous one's
// end_object_size; young and old generation alike). Summed over the collections of a window, that is
// what the process allocated in the window, give or take the young generation's capacity
// (`new_space_capacity`) at its edges: the first collection also counts what came just before the
// window, and what came after the last one is counted by none. Buffers' backing stores live outside
// the JS heap (malloc) and are not counted; their JS objects are. bench/alloc-check.ts checks the
// method on a toy server that allocates a known amount per query.

/** The node flag that prints the trace this file reads. */
export const GC_TRACE_FLAG = "--trace-gc-nvp";

export interface Allocation {
  /** Bytes allocated on the JS heap over the collections of the lines. */
  bytes: number;
  collections: number;
  /** The largest young generation seen, bytes: the window's edges can move `bytes` by about this much. */
  slack: number;
}

/** The allocation the --trace-gc-nvp lines among `lines` report (other lines are skipped). */
export function allocatedIn(lines: readonly string[]): Allocation {
  let bytes = 0;
  let collections = 0;
  let slack = 0;
  for (const line of lines) {
    const allocated = / ms: pause=.* allocated=(\d+) /.exec(line);
    if (allocated === null) continue;
    bytes += Number(allocated[1]);
    collections++;
    slack = Math.max(slack, Number(/ new_space_capacity=(\d+)/.exec(line)?.[1] ?? 0));
  }
  return { bytes, collections, slack };
}
