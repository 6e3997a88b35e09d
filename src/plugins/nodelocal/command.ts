// Runs the node's own tools (ip, iptables, nft): the node is set up through them, as an operator would,
// never through native code. A failure is one line naming the command and what it said.

import { execFile } from "node:child_process";

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command and its arguments (no shell), feeding `input` to its standard input. */
export type Run = (cmd: string, args: readonly string[], input?: string) => Promise<CommandResult>;

/** The real runner: a missing command resolves with code 127 and says so, as a shell would. */
export const runCommand: Run = (cmd, args, input) =>
  new Promise((resolve) => {
    const child = execFile(cmd, args, { timeout: 15_000, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: unknown }) | null;
      if (e && e.code === "ENOENT") {
        resolve({ code: 127, stdout: "", stderr: `${cmd}: command not found` });
        return;
      }
      const code = child.exitCode ?? (e ? 1 : 0);
      resolve({ code, stdout, stderr });
    });
    // A command that exits without reading its input (most do) closes the pipe: that is no error.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input ?? "");
  });

export class NodeSetupError extends Error {
  readonly code = "CDNS_ERR_NODELOCAL";
  constructor(message: string) {
    super(message);
    this.name = "NodeSetupError";
  }
}

/** "ip link add nodelocaldns type dummy: Operation not permitted": the command as typed and the first
 * line of what it printed on stderr, plus what usually fixes it. */
export function commandFailure(cmd: string, args: readonly string[], r: CommandResult): NodeSetupError {
  const said = r.stderr.trim().split("\n")[0] || `exit status ${r.code}`;
  return new NodeSetupError(`${[cmd, ...args].join(" ")}: ${said}${hint(r)}`);
}

function hint(r: CommandResult): string {
  if (r.code === 127) return " (install it in the image: iproute2, iptables or nftables)";
  if (/not permitted|permission denied|you must be root/i.test(r.stderr)) {
    return " (the container needs the NET_ADMIN capability, and NET_RAW for iptables-legacy, and must run as root)";
  }
  return "";
}

/** Runs and throws NodeSetupError unless it exits 0; resolves with its standard output. */
export async function mustRun(
  run: Run,
  cmd: string,
  args: readonly string[],
  input?: string,
): Promise<string> {
  const r = await run(cmd, args, input);
  if (r.code !== 0) throw commandFailure(cmd, args, r);
  return r.stdout;
}
