// The reliability suite: `npm run soak` runs every part of test/soak/parts.ts at full scale, one after
// another, each in a process of its own (a part that crashes or leaks cannot spoil the next), and
// prints every figure as a Markdown table, dated, for the README's Reliability section.
//
//   npm run soak                        every part, full scale
//   npm run soak -- fuzz tcp-abuse      these parts
//   npm run soak -- --reduced           the bounded versions npm test runs (a quick check)
//
// Exits 1 when a part missed a target or did not finish. Each part's process gets the open-file limit
// raised to the hard limit (for its many connections); nothing else is changed for the machine.

import { spawn } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PARTS, type PartEntry } from "./parts.ts";
import { RESULT_PREFIX, type Figure } from "./part.ts";

interface Outcome {
  entry: PartEntry;
  figures: Figure[];
  /** Why the part produced no report (exit code, signal), if it did not. */
  failed?: string;
  seconds: number;
}

function runPart(entry: PartEntry, reduced: boolean): Promise<Outcome> {
  const file = join(import.meta.dirname, entry.file);
  const args = [process.execPath, file, ...(reduced ? ["--reduced"] : [])];
  const started = performance.now();
  const child = spawn("sh", ["-c", 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', "sh", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let figures: Figure[] | undefined;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith(RESULT_PREFIX))
      figures = (JSON.parse(line.slice(RESULT_PREFIX.length)) as { figures: Figure[] }).figures;
    else process.stderr.write(`[${entry.name}] ${line}\n`);
  });
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      if (figures === undefined) {
        resolve({ entry, figures: [], failed: signal ? `killed by ${signal}` : `exit ${code}`, seconds });
      } else {
        resolve({ entry, figures, seconds });
      }
    });
  });
}

function table(outcomes: Outcome[]): string {
  const rows = ["| part | figure | value | target | met |", "|---|---|---|---|---|"];
  for (const o of outcomes) {
    if (o.failed !== undefined)
      rows.push(`| ${o.entry.name} | did not finish | ${o.failed} | a report | no |`);
    for (const f of o.figures) {
      const met = f.met === undefined ? "" : f.met ? "yes" : "**no**";
      rows.push(`| ${o.entry.name} | ${f.name} | ${f.value} | ${f.target ?? ""} | ${met} |`);
    }
  }
  return rows.join("\n");
}

const argv = process.argv.slice(2);
const reduced = argv.includes("--reduced");
const names = argv.filter((a) => !a.startsWith("--"));
const unknown = names.filter((n) => !PARTS.some((p) => p.name === n));
if (unknown.length > 0) {
  process.stderr.write(
    `soak: no part ${unknown.join(", ")}; parts: ${PARTS.map((p) => p.name).join(", ")}\n`,
  );
  process.exit(2);
}
const chosen = names.length === 0 ? PARTS : PARTS.filter((p) => names.includes(p.name));
const outcomes: Outcome[] = [];
for (const entry of chosen) {
  process.stderr.write(`soak: ${entry.name}${reduced ? " (reduced)" : ""}\n`);
  const o = await runPart(entry, reduced);
  process.stderr.write(`soak: ${entry.name} ${o.failed ?? "done"} in ${o.seconds.toFixed(0)} s\n`);
  outcomes.push(o);
}
const command = `npm run soak${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`;
const date = new Date().toISOString().slice(0, 10);
process.stdout.write(
  `Soak ${date}, \`${command}\`, node ${process.version}, ${cpus().length} cores` +
    ` (${cpus()[0]?.model.trim() ?? "unknown CPU"}):\n\n${table(outcomes)}\n`,
);
const bad = outcomes.filter((o) => o.failed !== undefined || o.figures.some((f) => f.met === false));
if (bad.length > 0) {
  process.stderr.write(`soak: targets missed in ${bad.map((o) => o.entry.name).join(", ")}\n`);
  process.exitCode = 1;
}
