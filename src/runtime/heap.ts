// One full garbage collection on request. After the first LIST of a big cluster, V8 keeps the heap it
// grew for the parsed pages (tens of MB at 10k services, about 60 MB at 100k) and does not give it
// back while the server is idle. A plain full collection frees the garbage but leaves the old space's
// pages half empty, the store's records scattered among them (measured at 10k services: 27 MB live in
// 45 MB of pages); the "last resort" flavour compacts them and gives the empty pages back (27 MB in
// 28 MB; RSS 122 -> 101 MB). The collector is reached without a command-line flag (the image's entry
// stays plain): --expose-gc set at run time exposes `gc` to new contexts.

import v8 from "node:v8";
import vm from "node:vm";

type Gc = (o: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;
let gc: Gc | undefined;

/** Compacting collections run so far (tests check when one ran). */
export const gcStats = { compactions: 0 };

export function collectGarbage(): void {
  if (gc === undefined) {
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("gc") as Gc;
  }
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  gcStats.compactions++;
}

/**
 * How far V8 may grow the old space past what the last full collection kept, in percent. Left to
 * itself V8 picks a factor of up to 4x when collections are cheap, and a DNS server's garbage is cheap
 * to collect: under a minute of full query load at 10k services the heap went from 35 MB live to
 * 97 MB before its next full collection, and V8 then pooled 46 MB of the freed pages (peak RSS 188-215
 * MB). At 30% the full collections come every 8 s at that load, 5-10 ms each, and the heap stays under
 * 47 MB (peak RSS 124 MB).
 * - `list`: the first LIST, whose parsed pages all turn to garbage. The peak RSS of a start at 100k
 *   services 391 -> 234 MB (10k: 121 -> 105 MB), for more collections while it loads.
 * - `serving`: from then on, and from process start for servers without a cluster.
 */
const GROWTH_PERCENT = { list: 20, serving: 30 } as const;

export function limitHeapGrowth(phase: keyof typeof GROWTH_PERCENT): void {
  v8.setFlagsFromString(`--heap-growing-percent=${GROWTH_PERCENT[phase]}`);
}
