// Child processes of a benchmark run: started pinned to a core, read for a ready line, measured
// (RSS from /proc), and killed whatever way the run ends.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { createInterface } from "node:readline";

/** Pinning needs two cores: the servers on core 0, dnsperf on core 1. BENCH_PIN=0 pins nothing: a
 * server with -workers 2 then has both cores, beside dnsperf. */
export const PIN = cpus().length > 1 && process.env.BENCH_PIN !== "0";

/** Whether startPinned pins now: bench/run.ts turns it off for its passes with more than one worker,
 * where the servers and dnsperf share both cores. */
let pinned = PIN;
export const setPinning = (on: boolean) => {
  pinned = on && PIN;
};
export const pinning = () => pinned;

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
  const proc = spawn(pinned ? "taskset" : cmd, pinned ? ["-c", "0", cmd, ...args] : args, {
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

/** Resident memory by kind, MiB: anonymous (heaps, stacks: what the process made), file-backed (the
 * binary's and libraries' pages it has touched, shared with every process mapping the same files) and
 * shared memory (shmem, memfd, a SharedArrayBuffer's pages are anonymous unless shared by a file). */
export interface RssSplit {
  anon: number;
  file: number;
  shmem: number;
}

/** The split from the text of /proc/PID/status (RssAnon, RssFile, RssShmem, in kB); undefined when a
 * line is missing (a kernel before 4.5). */
export function parseRssSplit(status: string): RssSplit | undefined {
  const mib = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(status);
    return m ? Number(m[1]) / 1024 : undefined;
  };
  const [anon, file, shmem] = [mib("RssAnon"), mib("RssFile"), mib("RssShmem")];
  return anon === undefined || file === undefined || shmem === undefined ? undefined : { anon, file, shmem };
}

/** A process's RSS split now, with its total (VmRSS), MiB; undefined when it is gone. */
export function rssSplitOf(pid: number | undefined): (RssSplit & { rss: number }) | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const split = parseRssSplit(status);
    const rss = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
    return split && { ...split, rss };
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS split every `everyMs` until stopped, and keeps the sample of the highest
 * RSS: the kernel keeps a peak of the total only (VmHWM), not of its parts. */
export function sampleRssSplit(pid: number, everyMs = 50): { stop(): RssSplit | undefined } {
  let top: (RssSplit & { rss: number }) | undefined;
  const take = () => {
    const now = rssSplitOf(pid);
    if (now && (top === undefined || now.rss > top.rss)) top = now;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return top && { anon: top.anon, file: top.file, shmem: top.shmem };
    },
  };
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

/** A process's main thread so far, from /proc/PID/schedstat: seconds it ran on a CPU, and seconds it
 * was ready to run and waited for one (the machine's other work holding every core). */
export function schedOf(pid: number | undefined): { ran: number; waited: number } {
  try {
    const [ran, waited] = readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ").map(Number);
    return { ran: ran / 1e9, waited: waited / 1e9 };
  } catch {
    return { ran: NaN, waited: NaN };
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
