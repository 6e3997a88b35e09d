// Heap bytes a function allocates per call, as V8 reports it (the growth of the used heap between
// collections): not a timing, so the same figure on a busy machine once the code is optimized.

import { heapGrowth } from "../../bench/heap-growth.ts";

/** Bytes allocated per call of `f`, the best of three rounds of n calls after one that warms. */
export function bytesPerCall(f: (i: number) => void, n: number): number {
  let best = Infinity;
  for (let round = 0; round < 4; round++) {
    const growth = heapGrowth();
    for (let i = 0; i < n; i++) f(i);
    const allocated = growth().bytes;
    if (round > 0) best = Math.min(best, allocated / n);
  }
  return best;
}
