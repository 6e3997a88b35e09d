// One full garbage collection on request. After the first LIST of a big cluster, V8 keeps the heap it
// grew for the parsed pages (tens of MB at 10k services, about 60 MB at 100k) and does not give it
// back while the server is idle. A plain full collection frees the garbage but leaves the old space's
// pages half empty, the store's records scattered among them (measured at 10k services: 27 MB live in
// 45 MB of pages); the "last resort" flavour compacts them and gives the empty pages back (27 MB in
// 28 MB; RSS 122 -> 101 MB). The collector is reached without a command-line flag (the image's entry
// stays plain): --expose-gc set at run time exposes `gc` to new contexts.

import v8 from "node:v8";
import vm from "node:vm";
import { watchBacklog } from "./watch-backlog.ts";

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
 * While a backlog of watch events is being applied (a watch storm: a rollout's or a failing node's
 * thousands of EndpointSlice changes a second), the serving limit is raised to STORM_PERCENT. Each
 * full collection is a pause of the answering thread (7-40 ms measured during a storm at 10k
 * services), and at 30% the events' garbage brought one about every second; at 100% a third as many
 * (7-11 against 21-22 in a 10k-service storm of 50,000 events, `--trace-gc`), for about 10 MB more at
 * the storm's peak. The limit goes back once the backlog is applied.
 */
const GROWTH_PERCENT = { list: 20, serving: 30 } as const;
const STORM_PERCENT = 100;

let phase: keyof typeof GROWTH_PERCENT = "serving";
watchBacklog.subscribe(apply);

export function limitHeapGrowth(next: keyof typeof GROWTH_PERCENT): void {
  phase = next;
  apply();
}

/** The growth in force (tests). */
export function heapGrowthPercent(): number {
  return watchBacklog.busy && phase === "serving" ? STORM_PERCENT : GROWTH_PERCENT[phase];
}

function apply(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${heapGrowthPercent()}`);
}
