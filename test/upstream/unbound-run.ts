// Debian's unbound run for a test: a config of its own in a throwaway folder, in the foreground, on
// loopback. It stops by itself: unbound runs under a small shell that waits for its stdin to close,
// which happens at stop() or whenever the test process ends, however it ends; then the shell kills
// unbound. unbound-doh.ts and unbound-validator.ts build their servers on it.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers/free-port.ts";

export interface RunningUnbound {
  port: number;
  /** What unbound printed, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export interface UnboundSetup {
  /** Lines of its `server:` section besides the interface and the run-in-the-foreground ones. */
  server: (o: { port: number; dir: string }) => string[];
  /** Sections after `server:` (stub-zone ...). */
  sections?: string[];
  /** True once it serves what the test needs (asked every 100 ms, 10 s at most). */
  ready: (port: number) => Promise<boolean>;
  /** What it serves, for the error when it does not start ("DoH"). */
  what?: string;
  /** Run inside this network namespace (`ip netns exec`), on `port` there (default 5353): the free-port
   * probe looks at this process's own namespace. */
  netns?: string;
  port?: number;
}

/** Starts unbound on a free port of 127.0.0.1 and resolves once `ready` says it serves. */
export async function runUnbound(o: UnboundSetup): Promise<RunningUnbound> {
  const port = o.port ?? (o.netns === undefined ? await freePort() : 5353);
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-unbound-"));
  const conf = join(dir, "unbound.conf");
  const lines = [
    "server:",
    `  interface: 127.0.0.1@${port}`,
    "  do-daemonize: no",
    '  chroot: ""',
    '  username: ""',
    `  directory: "${dir}"`,
    '  pidfile: ""',
    "  use-syslog: no",
    '  logfile: ""',
    "  verbosity: 1",
    "  do-ip6: no",
    ...o.server({ port, dir }),
    ...(o.sections ?? []),
    "remote-control:",
    "  control-enable: no",
    "",
  ];
  writeFileSync(conf, lines.join("\n"));
  const script =
    'command -v unbound >/dev/null || { echo "unbound not found on PATH: apt-get install unbound" >&2; exit 127; }; ' +
    'unbound -d -c "$1" </dev/null & u=$!; cat >/dev/null; kill $u; wait $u';
  const sh = ["sh", "-c", script, "sh", conf];
  const [cmd, ...args] = o.netns === undefined ? sh : ["ip", "netns", "exec", o.netns, ...sh];
  const proc = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
  let log = "";
  proc.stdout.on("data", (d: Buffer) => (log += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const stop = async () => {
    proc.stdin.end();
    const timer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, 5000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await o.ready(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`unbound did not start${o.what ? ` serving ${o.what}` : ""} on ${port}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, log: () => log, stop };
}
