// Runs the real `dig` (bind9-dnsutils) and parses what it prints.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
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
  return digAt("127.0.0.1", port, name, type, ...opts);
}

/** `dig` as above, at another server address ("::1" for an IPv6 client). */
export async function digAt(
  server: string,
  port: number,
  name: string,
  type = "A",
  ...opts: string[]
): Promise<DigResult> {
  return digIn(undefined, server, port, name, type, ...opts);
}

/** `digAt` run inside network namespace `netns` (`ip netns exec`); in this one when undefined. */
export async function digIn(
  netns: string | undefined,
  server: string,
  port: number,
  name: string,
  ...rest: string[]
): Promise<DigResult> {
  const [type = "A", ...opts] = rest;
  const args = [`@${server}`, "-p", String(port), name, type, "+tries=1", "+time=3", "+nocookie", ...opts];
  const [cmd, ...cmdArgs] =
    netns === undefined ? ["dig", ...args] : ["ip", "netns", "exec", netns, "dig", ...args];
  const { stdout } = await run(cmd, cmdArgs, { timeout: 15_000 });
  return parseDig(stdout);
}

/** Asks until the sorted answer (or the status when it is empty: "NXDOMAIN") equals `want`, for
 * changes that reach the server through a watch; fails with the last answer after about 10 s. */
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

export interface DigTransfer {
  /** The records as dig printed them, whitespace condensed, in order. */
  records: string[];
  /** From dig's "XFR size: N records (messages M, bytes B)"; 0 when it failed. */
  messages: number;
  bytes: number;
  /** dig printed "; Transfer failed." (an error rcode, or the connection closed early). */
  failed: boolean;
}

/** `dig @127.0.0.1 -p PORT ZONE AXFR` (or "IXFR=serial"), which always goes over TCP. */
export async function digTransfer(port: number, zone: string, type = "AXFR"): Promise<DigTransfer> {
  const args = ["@127.0.0.1", "-p", String(port), zone, type, "+tries=1", "+time=10", "+nocookie"];
  const { stdout } = await run("dig", args, { timeout: 120_000, maxBuffer: 512 * 1024 * 1024 });
  const size = /XFR size: (\d+) records \(messages (\d+), bytes (\d+)\)/.exec(stdout);
  return {
    records: stdout
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith(";"))
      .map((l) => l.replace(/\s+/g, " ").trim()),
    messages: Number(size?.[2] ?? 0),
    bytes: Number(size?.[3] ?? 0),
    failed: stdout.includes("; Transfer failed."),
  };
}
