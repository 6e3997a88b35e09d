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

/** While on, V8 grows the old space by 20% over what the last full collection kept instead of its own
 * factor (up to 4x). For the first LIST, whose parsed pages all turn to garbage: the peak RSS of a
 * start at 100k services 391 -> 234 MB (10k: 121 -> 105 MB), for more collections during the LIST
 * (start to synced at 100k 12-15 -> 16-18 s). Turned off again once synced, so serving never pays for
 * it. */
export function limitHeapGrowth(on: boolean): void {
  v8.setFlagsFromString(`--heap-growing-percent=${on ? 20 : 0}`);
}
