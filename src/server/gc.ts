// One full garbage collection on request. After the first LIST of a big cluster, V8 keeps the heap it
// grew for the parsed pages (tens of MB at 10k services, about 60 MB at 100k) and does not give it
// back while the server is idle; one collection right after the sync does. The collector is reached
// without a command-line flag (the image's entry stays plain): --expose-gc set at run time exposes
// `gc` to new contexts.

import v8 from "node:v8";
import vm from "node:vm";

let gc: (() => void) | undefined;

export function collectGarbage(): void {
  if (gc === undefined) {
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("gc") as () => void;
  }
  gc();
}
