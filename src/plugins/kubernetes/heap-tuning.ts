// The heap around a kubernetes source's first sync (see src/runtime/heap.ts): its growth bounded while
// the first LIST's pages come in, then what they took given back in one compacting collection, once
// the sync's tick has let go of the last page, and the serving limit set.

import { collectGarbage, limitHeapGrowth } from "../../runtime/heap.ts";
import type { Store } from "./store/store.ts";

/** Tunes the heap for `store`'s first sync, and calls `settled` once that work is done, with the
 * collection's milliseconds. `before` runs first (the answer path's warm-up, whose garbage the
 * collection then takes too). `takesOver`: a reload's new instance, whose old one is answering
 * queries: the collection would stop them all (0.13 s at 10k services, 0.57 s at 100k), so it is
 * skipped (undefined milliseconds). */
export function tuneHeapAroundSync(
  store: Store,
  takesOver: boolean,
  before: () => Promise<void>,
  settled: (compactMs: number | undefined) => void,
): void {
  const settle = () => {
    let compactMs: number | undefined;
    if (!takesOver) {
      const t0 = performance.now();
      collectGarbage();
      compactMs = Math.round(performance.now() - t0);
    }
    limitHeapGrowth("serving");
    settled(compactMs);
  };
  void store.whenSynced().then(() => {
    setTimeout(() => void before().then(settle), 100).unref();
  });
  if (!store.synced) limitHeapGrowth("list");
}
