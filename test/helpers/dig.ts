// Runs the real `dig` (bind9-dnsutils) and parses what it prints.

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";

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

/** Asks until the sorted answer (or the status when it is empty) equals `want`, for a change that
 * reaches the server asynchronously (a watch event); fails with the last answer after 200 tries. */
export async function digUntil(
  port: number,
  name: string,
  type: string,
  want: string[] | string,
): Promise<void> {
  let last = "";
  for (let i = 0; i < 200; i++) {
    const r = await dig(port, name, type);
    const got = r.answer.length > 0 ? [...r.answer].sort() : r.status;
    last = JSON.stringify(got);
    if (last === JSON.stringify(Array.isArray(want) ? [...want].sort() : want)) return;
    await sleep(50);
  }
  assert.fail(`${name} ${type}: still ${last}, want ${JSON.stringify(want)}`);
}
