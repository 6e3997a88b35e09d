// A real validating resolver for dnssec's tests: Debian's unbound with the validator module, a trust
// anchor for each zone the test signs, and those zones stubbed to a server on loopback. A reply it
// could validate carries the AD bit; one it could not is SERVFAIL.
//
// It stops by itself: unbound runs under a small shell that waits for its stdin to close, which
// happens at stop() or whenever the test process ends; then the shell kills unbound.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers/free-port.ts";
import { dig } from "../helpers/dig.ts";

export interface UnboundValidator {
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/** Starts unbound on a free port, validating `zones` (name -> DNSKEY record text of the trust anchor)
 * against the server at 127.0.0.1:`serverPort`. */
export async function startUnboundValidator(
  zones: Record<string, string>,
  serverPort: number,
): Promise<UnboundValidator> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-unbound-val-"));
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
    "  do-not-query-localhost: no",
    '  module-config: "validator iterator"',
    "  val-log-level: 2",
    "  access-control: 127.0.0.0/8 allow",
    // Unbound answers the special-use names itself (RFC 6761's test., local. ...) unless told not to.
    ...Object.keys(zones).map((z) => `  local-zone: "${z.split(".").slice(-2).join(".")}" nodefault`),
    ...Object.values(zones).map((anchor) => `  trust-anchor: "${anchor}"`),
    ...Object.keys(zones).flatMap((z) => [
      "stub-zone:",
      `  name: "${z}"`,
      `  stub-addr: 127.0.0.1@${serverPort}`,
    ]),
    "remote-control:",
    "  control-enable: no",
    "",
  ];
  writeFileSync(conf, lines.join("\n"));
  const script =
    'command -v unbound >/dev/null || { echo "unbound not found on PATH: apt-get install unbound" >&2; exit 127; }; ' +
    'unbound -d -c "$1" </dev/null & u=$!; cat >/dev/null; kill $u; wait $u';
  const proc = spawn("sh", ["-c", script, "sh", conf], { stdio: ["pipe", "pipe", "pipe"], detached: true });
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
  // Ready once it answers a query of its own (the root's SOA is refused or fails; any reply will do).
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`unbound did not start on ${port}:\n${log}`);
    }
    const ok = await dig(port, "localhost", "A").then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, log: () => log, stop };
}
