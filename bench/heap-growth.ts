// JS heap bytes allocated over a stretch of work, as V8 reports it: the growth of the used heap
// between collections, summed (what was allocated, whether it lived or not). Not a timing, so the
// figure holds on a busy machine. Buffers' backing stores are outside the heap and not counted.

import v8 from "node:v8";

/** Starts counting; the function returned stops and gives the bytes allocated since, the bytes young
 * collections promoted to the old generation (what full collections will have to collect), and the
 * collections that ran (with their types). */
export function heapGrowth(): () => {
  bytes: number;
  promoted: number;
  collections: v8.GCProfilerResult["statistics"];
} {
  const profiler = new v8.GCProfiler();
  profiler.start();
  let at = v8.getHeapStatistics().used_heap_size;
  return () => {
    const end = v8.getHeapStatistics().used_heap_size;
    const collections = profiler.stop().statistics;
    let bytes = 0;
    let promoted = 0;
    for (const g of collections) {
      bytes += g.beforeGC.heapStatistics.usedHeapSize - at;
      at = g.afterGC.heapStatistics.usedHeapSize;
      if (g.gcType === "Scavenge") promoted += oldSpace(g.afterGC) - oldSpace(g.beforeGC);
    }
    return { bytes: bytes + end - at, promoted, collections };
  };
}

function oldSpace(at: v8.GCProfilerResult["statistics"][number]["afterGC"]): number {
  return at.heapSpaceStatistics.find((s) => s.spaceName === "old_space")?.spaceUsedSize ?? 0;
}
