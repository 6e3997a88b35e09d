// A real DNS-over-HTTPS upstream for forward's tests: Debian's unbound (built with libnghttp2) serving
// DoH (HTTP/2, RFC 8484) at https://127.0.0.1:PORT/dns-query, answering who.example.org. TXT from its
// own local data, with a certificate from the test's throwaway CA (tls-front.ts's makePki).
//
// It stops by itself: unbound runs under a small shell that waits for its stdin to close, which happens
// at stop() or whenever the test process ends, however it ends; then the shell kills unbound.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers/free-port.ts";
import type { Pki } from "./tls-front.ts";

export interface UnboundDoh {
  port: number;
  /** What unbound printed, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/** Starts unbound serving DoH on a free port; who.example.org. TXT is `id`. With `cleartext`, it
 * serves HTTP/2 without TLS (http-notls-downstream, for a TLS front that shows what came in). */
export async function startUnboundDoh(pki: Pki, id = "unbound-doh", cleartext = false): Promise<UnboundDoh> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-unbound-"));
  const conf = join(dir, "unbound.conf");
  writeFileSync(
    conf,
    [
      "server:",
      `  interface: 127.0.0.1@${port}`,
      `  https-port: ${port}`,
      `  tls-service-key: "${pki.serverKey}"`,
      `  tls-service-pem: "${pki.serverCert}"`,
      '  http-endpoint: "/dns-query"',
      `  http-notls-downstream: ${cleartext ? "yes" : "no"}`,
      "  do-daemonize: no",
      '  chroot: ""',
      '  username: ""',
      `  directory: "${dir}"`,
      '  pidfile: ""',
      "  use-syslog: no",
      '  logfile: ""',
      "  verbosity: 1",
      "  do-ip6: no",
      '  module-config: "iterator"',
      '  local-zone: "example.org." static',
      `  local-data: "who.example.org. 60 IN TXT ${id}"`,
      "  access-control: 127.0.0.0/8 allow",
      "remote-control:",
      "  control-enable: no",
      "",
    ].join("\n"),
  );
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
  // Ready once its port takes connections.
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`unbound did not start serving DoH on ${port}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, log: () => log, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
