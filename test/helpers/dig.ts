// Runs the real `dig` (bind9-dnsutils) and parses what it prints.

import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface DigResult {
  status: string;
  flags: string[];
  answer: string[];
  authority: string[];
  additional: string[];
  /** "MSG SIZE  rcvd: N" */
  size: number;
  text: string;
}

/** `dig @127.0.0.1 -p PORT NAME TYPE` plus options such as "+tcp", "+noedns", "+bufsize=4096", "-c", "CH". */
export async function dig(port: number, name: string, type = "A", ...opts: string[]): Promise<DigResult> {
  const args = ["@127.0.0.1", "-p", String(port), name, type, "+tries=1", "+time=3", "+nocookie", ...opts];
  const { stdout } = await run("dig", args, { timeout: 15_000 });
  return parseDig(stdout);
}

export function parseDig(text: string): DigResult {
  const status = /status: ([A-Z]+)/.exec(text)?.[1] ?? "";
  const flags = (/;; flags: ([a-z ]*);/.exec(text)?.[1] ?? "").trim().split(/\s+/).filter(Boolean);
  const size = Number(/MSG SIZE\s+rcvd: (\d+)/.exec(text)?.[1] ?? -1);
  const sections: Record<string, string[]> = { ANSWER: [], AUTHORITY: [], ADDITIONAL: [] };
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    const m = /^;; (ANSWER|AUTHORITY|ADDITIONAL) SECTION:/.exec(line);
    if (m) {
      current = sections[m[1]];
      continue;
    }
    if (line.trim() === "" || line.startsWith(";")) {
      if (line.trim() === "") current = undefined;
      continue;
    }
    current?.push(line.replace(/\s+/g, " ").trim());
  }
  return {
    status,
    flags,
    answer: sections.ANSWER,
    authority: sections.AUTHORITY,
    additional: sections.ADDITIONAL,
    size,
    text,
  };
}
