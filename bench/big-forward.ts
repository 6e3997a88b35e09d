// What a forwarded reply of thousands of records costs the server (issue 33): Knot answers unique
// names with RECORDS A records, clusterdns (kubeadm's plugins, soak/costly-client.ts) forwards them, a
// stub asks each once (UDP, then TCP on TC). Prints the server's CPU per name, its main thread and its
// other threads (V8's collector) apart, from /proc; with --profile, a second run under V8's profiler
// (which slows the server down about twice) prints the functions with the most self time.
//   node bench/big-forward.ts [RECORDS] [NAMES] [--profile]      (4000 records, 300 names by default)

import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../test/helpers/server.ts";
import { startKnot } from "../test/upstream/knot.ts";
import { askBig, uniqueName } from "../test/soak/big-client.ts";
import { bigZone, costlyCorefile } from "../test/soak/costly-client.ts";
import { printSelfTime } from "./cpu-profile.ts";
import { CLOCK_TICKS } from "./processes.ts";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const records = Number(args[0] ?? 4000);
const names = Number(args[1] ?? 300);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-big-forward-"));

/** CPU seconds of the process's main thread and of its other threads, from /proc/PID/task. */
function threadSeconds(proc: ChildProcess): { main: number; others: number } {
  const out = { main: 0, others: 0 };
  for (const task of readdirSync(`/proc/${proc.pid}/task`)) {
    const stat = readFileSync(`/proc/${proc.pid}/task/${task}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const s = (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
    if (task === String(proc.pid)) out.main += s;
    else out.others += s;
  }
  return out;
}

const knot = await startKnot({ zone: { origin: "big.test.", text: bigZone([records]) } });
const zone = `r${records}.big.test.`;
for (const profiled of process.argv.includes("--profile") ? [false, true] : [false]) {
  const env: Record<string, string> = profiled ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` } : {};
  const server = await startServer(costlyCorefile(knot), { env });
  for (let i = 0; i < 20; i++) await askBig(server.port, uniqueName(zone));
  const before = threadSeconds(server.proc);
  for (let i = 0; i < names; i++) await askBig(server.port, uniqueName(zone));
  const after = threadSeconds(server.proc);
  const main = ((after.main - before.main) * 1000) / names;
  const others = ((after.others - before.others) * 1000) / names;
  const how = profiled
    ? "under the profiler"
    : `main thread ${main.toFixed(2)} + others ${others.toFixed(2)}`;
  console.log(
    `${records} records: ${(main + others).toFixed(2)} ms of server CPU per name (${how}; ${names} names)`,
  );
  await server.stop("SIGINT");
}
await knot.stop();
if (!process.argv.includes("--profile")) process.exit(0);

printSelfTime(dir, 25);
