// The summary of a V8 CPU profile (.cpuprofile, from --cpu-prof) the benchmarks print: the functions
// with the most self time, as shares of every sample.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** Prints the `top` functions with the most self time of the profile --cpu-prof-dir=`dir` holds. */
export function printSelfTime(dir: string, top: number): void {
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error(`no profile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as { nodes: ProfileNode[] };
  const self = new Map<string, number>();
  let total = 0;
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    total += hits;
    const f = n.callFrame;
    const where = f.url.replace(/^.*\/(src|node_modules)\//, "$1/");
    const key = `${f.functionName || "(anonymous)"} ${where}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${key}`);
  }
  console.log(`profile: ${join(dir, file)}`);
}
