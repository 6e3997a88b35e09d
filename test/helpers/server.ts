// Starts a real clusterdns process from a Corefile string, on free ports, and stops it.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";

export const ROOT = resolve(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "clusterdns");

export interface RunningServer {
  /** The DNS port of each listener group, in Corefile order. */
  ports: number[];
  port: number;
  proc: ChildProcess;
  /** Every log line the server printed so far, parsed. */
  logs: Record<string, unknown>[];
  /** What it printed on stderr so far. */
  stderr(): string;
  dir: string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  /** Extra flags; `-dns.port 0` is added unless present. */
  args?: string[];
  env?: Record<string, string>;
  /** Files to write next to the Corefile (relative paths resolve against its folder). */
  files?: Record<string, string>;
  /** Working directory (default: the temporary folder). */
  cwd?: string;
  timeoutMs?: number;
  /** A network namespace to run in (`ip netns exec NAME`): its own ports, so fixed ones are free. */
  netns?: string;
  /** The server's open-file limit (`ulimit -n` in its spawn only), for tests with many connections. */
  nofile?: number;
  /** The one core the server runs on (`taskset -c`), as a pod with a core of its own. */
  cpu?: number;
}

/** Starts clusterdns with `corefile` (undefined: no -conf, so the built-in default or ./Corefile). */
export async function startServer(
  corefile: string | undefined,
  o: StartOptions = {},
): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-test-"));
  for (const [name, text] of Object.entries(o.files ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const args = [BIN, ...(o.args ?? [])];
  if (corefile !== undefined) {
    writeFileSync(join(dir, "Corefile"), corefile);
    args.push("-conf", join(dir, "Corefile"));
  }
  if (!args.includes("-dns.port")) args.push("-dns.port", "0");
  let [cmd, cmdArgs] =
    o.nofile === undefined
      ? [process.execPath, args]
      : ["sh", ["-c", `ulimit -n ${o.nofile} && exec "$@"`, "sh", process.execPath, ...args]];
  if (o.cpu !== undefined) [cmd, cmdArgs] = ["taskset", ["-c", String(o.cpu), cmd, ...cmdArgs]];
  if (o.netns !== undefined) [cmd, cmdArgs] = ["ip", ["netns", "exec", o.netns, cmd, ...cmdArgs]];
  const proc = spawn(cmd, cmdArgs, {
    cwd: o.cwd ?? dir,
    env: { ...process.env, ...o.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));

  const ports = await new Promise<number[]>((resolveStart, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`clusterdns did not start in time\n${stderr}`));
    }, o.timeoutMs ?? 15_000);
    createInterface({ input: proc.stdout! }).on("line", (line) => {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        rec = { msg: line };
      }
      logs.push(rec);
      if (rec.msg === "started") {
        clearTimeout(timer);
        resolveStart(rec.ports as number[]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`clusterdns exited with ${code} before starting:\n${stderr}`));
    });
  });

  return {
    ports,
    port: ports[0],
    proc,
    logs,
    stderr: () => stderr,
    dir,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Runs clusterdns expecting it to fail at start-up; resolves with its exit code and output. */
export async function startFailure(
  corefile: string,
  files: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-test-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, "Corefile"), corefile);
  const proc = spawn(process.execPath, [BIN, "-conf", join(dir, "Corefile"), "-dns.port", "0"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  const code = await new Promise<number | null>((r) => proc.once("exit", (c) => r(c)));
  clearTimeout(timer);
  rmSync(dir, { recursive: true, force: true });
  return { code, stderr, stdout };
}
