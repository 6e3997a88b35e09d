// A throw-away Linux network namespace with its own /etc/resolv.conf, for tests that drive the real
// glibc resolver (getent) against a DNS server we run inside it.
//
// `ip netns exec NAME` bind-mounts every file of /etc/netns/NAME/ over the same name in /etc, so a
// command run through exec()/spawn() sees our resolv.conf, while the rest of /etc (nsswitch.conf,
// hosts) is the host's. The namespace starts with only `lo`, brought up here: 127.0.0.1 and ::1 are
// the only addresses until addAddress() adds more. Needs root and iproute2; createNetns() throws a
// NetnsError saying which is missing, so a test fails instead of silently skipping.
//
// Note for getaddrinfo-based tools (getent ahosts): AI_ADDRCONFIG looks at the namespace's addresses.
// With only loopback ones it sends A and AAAA; once addAddress() puts a non-loopback IPv4 address in
// (and no IPv6 one), it sends only A queries.

import { execFile, spawn as spawnChild, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";

export class NetnsError extends Error {
  readonly code = "CDNS_ERR_NETNS";
  constructor(message: string) {
    super(message);
    this.name = "NetnsError";
  }
}

export interface ExecResult {
  /** Exit code, or null when a signal ended the command. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  /** Added to the environment (which is otherwise this process's). */
  env?: Record<string, string>;
  /** Written to the command's standard input, which is then closed. */
  input?: string;
  /** The command is killed after this long (default 15 s); its result then has code null. */
  timeoutMs?: number;
}

export interface Netns {
  readonly name: string;
  /** The folder whose files `ip netns exec` mounts over /etc: /etc/netns/NAME. */
  readonly etcDir: string;
  /** Runs a command inside the namespace to completion; never rejects on a non-zero exit. */
  exec(cmd: string, args?: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** Starts a long-running command inside the namespace (stdio piped). The caller stops it. */
  spawn(cmd: string, args?: string[], opts?: { env?: Record<string, string> }): ChildProcess;
  /** Adds an address ("10.96.0.10/32", "fd00::10/128") to a device of the namespace (default lo). */
  addAddress(cidr: string, dev?: string): Promise<void>;
  /** Replaces the namespace's resolv.conf; commands started afterwards read the new one. */
  writeResolvConf(text: string): void;
  /** Kills what spawn() started, deletes the namespace and /etc/netns/NAME. Safe to call twice. */
  destroy(): Promise<void>;
}

const IP = "ip";

function run(cmd: string, args: string[], opts: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        env: opts.env ? { ...process.env, ...opts.env } : process.env,
        timeout: opts.timeoutMs ?? 15_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err && typeof (err as NodeJS.ErrnoException).code === "string") {
          // ENOENT and the like: the command could not be started at all.
          reject(err);
          return;
        }
        resolve({ code: child.exitCode, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}

/** Fails with a message naming what is missing when namespaces cannot be made here. */
async function checkPrerequisites(): Promise<void> {
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    throw new NetnsError(`network namespaces need root (uid is ${process.getuid()}): run the test as root`);
  }
  try {
    await run(IP, ["-V"]);
  } catch (err) {
    throw new NetnsError(
      `cannot run '${IP}' (${(err as Error).message}): install iproute2 (apt-get install -y iproute2)`,
    );
  }
}

/**
 * Creates namespace `name` (default: a random "cdns-XXXXXXXX") whose /etc/resolv.conf is
 * `resolvConf`, with lo up. On any failure everything made so far is removed before it throws.
 */
export async function createNetns(name: string | undefined, resolvConf: string): Promise<Netns> {
  await checkPrerequisites();
  const ns = name ?? `cdns-${randomBytes(4).toString("hex")}`;
  if (!/^[A-Za-z0-9_.-]{1,32}$/.test(ns) || ns === "." || ns === "..") {
    throw new NetnsError(`'${ns}' is not a usable namespace name`);
  }
  const etcDir = `/etc/netns/${ns}`;
  const children = new Set<ChildProcess>();
  let destroyed = false;

  const destroy = async (): Promise<void> => {
    if (destroyed) return;
    destroyed = true;
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGKILL");
        await exited;
      }
    }
    // Deleting an already missing namespace fails harmlessly; both steps always run.
    await run(IP, ["netns", "delete", ns]).catch(() => undefined);
    rmSync(etcDir, { recursive: true, force: true });
  };

  const created = await run(IP, ["netns", "add", ns]);
  if (created.code !== 0) {
    throw new NetnsError(`ip netns add ${ns} failed (exit ${created.code}): ${created.stderr.trim()}`);
  }
  try {
    mkdirSync(etcDir, { recursive: true });
    writeFileSync(`${etcDir}/resolv.conf`, resolvConf);
    const up = await run(IP, ["-n", ns, "link", "set", "lo", "up"]);
    if (up.code !== 0) throw new NetnsError(`bringing lo up in ${ns} failed: ${up.stderr.trim()}`);
  } catch (err) {
    await destroy();
    throw err;
  }

  return {
    name: ns,
    etcDir,
    exec: (cmd, args = [], opts = {}) => run(IP, ["netns", "exec", ns, cmd, ...args], opts),
    spawn(cmd, args = [], opts = {}) {
      if (destroyed) throw new NetnsError(`namespace ${ns} is already destroyed`);
      const child = spawnChild(IP, ["netns", "exec", ns, cmd, ...args], {
        env: opts.env ? { ...process.env, ...opts.env } : process.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      children.add(child);
      child.once("exit", () => children.delete(child));
      return child;
    },
    async addAddress(cidr, dev = "lo") {
      const r = await run(IP, ["-n", ns, "addr", "add", cidr, "dev", dev]);
      if (r.code !== 0) throw new NetnsError(`ip addr add ${cidr} dev ${dev} failed: ${r.stderr.trim()}`);
    },
    writeResolvConf(text) {
      writeFileSync(`${etcDir}/resolv.conf`, text);
    },
    destroy,
  };
}
