// Runs Knot's `kdig` (knot-dnsutils), the client that speaks DNS over TLS (+tls) and over HTTPS
// (+https, HTTP/2), and reads what it prints.

import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface KdigResult {
  /** "NOERROR", "NXDOMAIN"...; "" when no reply came. */
  status: string;
  /** The answer and additional records, one line each, as kdig prints them. */
  records: string[];
  /** Its ";; TLS session (...)" and ";; HTTP session (...)" lines. */
  sessions: string[];
  text: string;
  /** What it printed on stderr: ";; WARNING: ..." lines (a reply whose TSIG did not verify). */
  stderr: string;
}

/** `kdig @127.0.0.1 -p PORT NAME TYPE OPTS...`, e.g. "+tls-ca=ca.crt", "+https", "+https-get". */
export async function kdig(port: number, name: string, type: string, ...opts: string[]): Promise<KdigResult> {
  return kdigAt("127.0.0.1", port, name, type, ...opts);
}

/** `kdig` as above, at another server address. */
export async function kdigAt(
  server: string,
  port: number,
  name: string,
  type: string,
  ...opts: string[]
): Promise<KdigResult> {
  const args = [`@${server}`, "-p", String(port), name, type, "+retry=0", "+time=5", ...opts];
  let text: string;
  let stderr: string;
  try {
    ({ stdout: text, stderr } = await run("kdig", args, { timeout: 20_000 }));
  } catch (err) {
    stderr = String((err as { stderr?: string }).stderr ?? "");
    text = String((err as { stdout?: string }).stdout ?? "") + stderr;
  }
  const status = /HEADER<<- .*status: (\w+)/.exec(text)?.[1] ?? "";
  const records = text
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith(";"))
    .map((l) => l.replace(/\s+/g, " ").trim());
  const sessions = text.split("\n").filter((l) => /^;; (TLS|HTTP) session/.test(l));
  return { status, records, sessions, text, stderr };
}
