// JS heap bytes allocated over a stretch of work, as V8 reports it: the growth of the used heap
// between collections, summed (what was allocated, whether it lived or not). Not a timing, so the
// figure holds on a busy machine. Buffers' backing stores are outside the heap and not counted.

import v8 from "node:v8";

/** Starts counting; the function returned stops and gives the bytes allocated since, and the
 * collections that ran (with their types). */
export function heapGrowth(): () => { bytes: number; collections: v8.GCProfilerResult["statistics"] } {
  const profiler = new v8.GCProfiler();
  profiler.start();
  let at = v8.getHeapStatistics().used_heap_size;
  return () => {
    const end = v8.getHeapStatistics().used_heap_size;
    const collections = profiler.stop().statistics;
    let bytes = 0;
    for (const g of collections) {
      bytes += g.beforeGC.heapStatistics.usedHeapSize - at;
      at = g.afterGC.heapStatistics.usedHeapSize;
    }
    return { bytes: bytes + end - at, collections };
  };
}
