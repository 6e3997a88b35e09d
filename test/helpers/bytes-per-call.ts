// Heap bytes a function allocates per call, as V8 reports it (the growth of the used heap between
// collections): not a timing, so the same figure on a busy machine once the code is optimized.

import v8 from "node:v8";

/** Bytes allocated per call of `f`, the best of three rounds of n calls after one that warms. */
export function bytesPerCall(f: (i: number) => void, n: number): number {
  let best = Infinity;
  for (let round = 0; round < 4; round++) {
    const profiler = new v8.GCProfiler();
    profiler.start();
    let at = v8.getHeapStatistics().used_heap_size;
    for (let i = 0; i < n; i++) f(i);
    const end = v8.getHeapStatistics().used_heap_size;
    let allocated = 0;
    for (const g of profiler.stop().statistics) {
      allocated += g.beforeGC.heapStatistics.usedHeapSize - at;
      at = g.afterGC.heapStatistics.usedHeapSize;
    }
    allocated += end - at;
    if (round > 0) best = Math.min(best, allocated / n);
  }
  return best;
}
