// What every part of the reliability suite (`npm run soak`, test/soak/run.ts) is: a name, one line
// saying what it does, and a run that returns a Report of figures, some with a target. A part runs at
// full scale under the runner or alone (`node test/soak/PART.ts`), and at a reduced, bounded scale in
// `npm test` (its PART.test.ts asserts that no target was missed). Parts share nothing but this file:
// each starts its own servers and stops them before it returns.

import { readFileSync, readdirSync } from "node:fs";

export interface Figure {
  name: string;
  value: string;
  /** What the value must be, as text ("100%", "0", "<= 16 MB"); absent for a figure reported as is. */
  target?: string;
  met?: boolean;
}

export class Report {
  readonly part: string;
  readonly figures: Figure[] = [];

  constructor(part: string) {
    this.part = part;
  }

  /** A figure without a target. */
  note(name: string, value: number | string, unit = ""): void {
    this.figures.push({ name, value: show(value, unit) });
  }

  /** A figure with a target; `met` says whether the value reaches it. */
  check(name: string, value: number | string, met: boolean, target: string, unit = ""): void {
    this.figures.push({ name, value: show(value, unit), target, met });
  }

  /** "server alive at the end": the process has neither exited nor been killed. */
  alive(proc: { exitCode: number | null; signalCode: NodeJS.Signals | null }): void {
    const alive = proc.exitCode === null && proc.signalCode === null;
    this.check("server alive at the end", alive ? "yes" : "no", alive, "yes");
  }

  /** The targets missed, one line each ("part: name: value (target ...)"). */
  get missed(): string[] {
    return this.figures
      .filter((f) => f.met === false)
      .map((f) => `${this.part}: ${f.name}: ${f.value} (target ${f.target})`);
  }
}

function show(value: number | string, unit: string): string {
  const text = typeof value === "number" && !Number.isInteger(value) ? value.toFixed(1) : String(value);
  return unit === "" ? text : `${text} ${unit}`;
}

export interface PartOptions {
  /** The bounded version `npm test` runs: the same checks on far fewer packets, connections, seconds. */
  reduced: boolean;
  /** Progress lines (stderr under the runner; dropped in tests). */
  log(line: string): void;
}

export interface SoakPart {
  readonly name: string;
  readonly what: string;
  run(o: PartOptions): Promise<Report>;
}

/** The line a part run alone prints last on stdout, for the runner to read. */
export const RESULT_PREFIX = "soak-result ";

/** Runs `part` as a script: `node test/soak/PART.ts [--reduced]`. Progress goes to stderr, the report
 * to stdout as one JSON line; the exit code is 0 when every target was met. */
export async function runAlone(part: SoakPart): Promise<void> {
  const reduced = process.argv.includes("--reduced");
  const log = (line: string) => process.stderr.write(`[${part.name}] ${line}\n`);
  const report = await part.run({ reduced, log });
  for (const f of report.figures) {
    const target = f.target === undefined ? "" : ` (target ${f.target}: ${f.met ? "met" : "MISSED"})`;
    log(`${f.name}: ${f.value}${target}`);
  }
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify({ part: report.part, figures: report.figures })}\n`);
  process.exitCode = report.missed.length === 0 ? 0 : 1;
}

/** Resident memory of a process in MB (/proc/PID/status VmRSS), or NaN once it has exited. */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/** Descriptors a process has open, or NaN once it has exited. */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** TCP connections a process on this machine holds open on local port `port` (accepted ones: the
 * listener and sockets the kernel keeps after their close, TIME_WAIT and the like, aside). */
export function tcpConnectionsOn(port: number): number {
  let n = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      // local address "HEX:PORT", state (0A: LISTEN), inode (0: no descriptor holds it any more)
      if (parseInt(f[1].split(":")[1], 16) === port && f[3] !== "0A" && f[9] !== "0") n++;
    }
  }
  return n;
}
