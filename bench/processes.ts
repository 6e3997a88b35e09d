// Child processes of a benchmark run: started pinned to a core, read for a ready line, measured
// (RSS from /proc), and killed whatever way the run ends.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { createInterface } from "node:readline";

/** Pinning needs two cores: the servers on core 0, dnsperf on core 1. BENCH_PIN=0 pins nothing: a
 * server with -workers 2 then has both cores, beside dnsperf. */
export const PIN = cpus().length > 1 && process.env.BENCH_PIN !== "0";

/** The node flags clusterdns runs with in its image (Dockerfile ENTRYPOINT): measure what ships. */
export const NODE_FLAGS = ["--max-semi-space-size=1"];
/** The environment its image sets (Dockerfile ENV), NODE_ENV aside. */
export const IMAGE_ENV: Record<string, string> = { MALLOC_ARENA_MAX: "2" };

const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

export interface Started {
  proc: ChildProcess;
  /** The output line that matched `ready`. */
  line: string;
  /** Every output line so far (the process's output keeps being read). */
  lines: string[];
  /** When each line was read (performance.now()). */
  times: number[];
}

/** Starts `cmd args` on core 0 (when pinning) and waits for a line of its output matching `ready`. */
export function startPinned(
  cmd: string,
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<Started> {
  const proc = spawn(PIN ? "taskset" : cmd, PIN ? ["-c", "0", cmd, ...args] : args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} ${args.join(" ")} did not start`)), timeoutMs);
    const lines: string[] = [];
    const times: number[] = [];
    const onLine = (line: string) => {
      lines.push(line);
      times.push(performance.now());
      if (!ready.test(line)) return;
      clearTimeout(timer);
      resolve({ proc, line, lines, times });
    };
    createInterface({ input: proc.stdout! }).on("line", onLine);
    createInterface({ input: proc.stderr! }).on("line", onLine);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      const last = lines.slice(-5).join("\n  ");
      reject(new Error(`${cmd} ${args.join(" ")} exited with ${code} before it was ready:\n  ${last}`));
    });
  });
}

/** Stops a process: SIGTERM, then SIGKILL after `graceMs`; with 0, SIGKILL at once (a measured server
 * whose graceful stop has nothing left to give: clusterdns on kubeadm's Corefile answers for 5 s of
 * lameduck first). */
export async function stop(p: ChildProcess, graceMs = 5000): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once("exit", r));
  if (graceMs === 0) {
    p.kill("SIGKILL");
    await exited;
    return;
  }
  p.kill("SIGTERM");
  const t = setTimeout(() => p.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(t);
}

/** Resident and peak resident memory of a process, in MB (0 when it is gone). */
export function memoryOf(pid: number | undefined): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

/** Starts a new peak: VmHWM from now on shows the highest RSS after this call (clear_refs 5). */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** CPU seconds (user + system) a process has used so far, from /proc/PID/stat; NaN when it is gone.
 * Per query answered, it is the cost that stays put when a shared machine's other work steals time. */
export function cpuSecondsOf(pid: number | undefined): number {
  try {
    // Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** The TCP ports a process listens on: its sockets' inodes, found in /proc/net/tcp and tcp6 in state
 * LISTEN. Reads a listener bound to port 0 (health, ready, prometheus) without a log line naming it. */
export function listeningTcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1]);
    } catch {
      // The descriptor closed while being read.
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const row of readFileSync(table, "utf8").split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = row.trim().split(/\s+/);
      if (f[3] === "0A" && inodes.has(f[9])) ports.push(parseInt(f[1].split(":")[1], 16));
    }
  }
  return ports;
}

/** sysconf(_SC_CLK_TCK): 100 on every Linux this runs on. */
export const CLOCK_TICKS = 100;

/** The pid of the server itself: with taskset, the child execs the command, so the pid is the same. */
export const pidOf = (s: Started) => s.proc.pid;
