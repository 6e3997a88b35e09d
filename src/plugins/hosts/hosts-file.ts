// The hosts(5) format: `ADDRESS NAME [ALIASES...]`, `#` starts a comment. Bad lines are reported, not
// thrown, so one typo in /etc/hosts does not take the other entries down.

import { isIPv4, isIPv6 } from "node:net";
import { canonical } from "../../dns/name.ts";

export interface HostsEntry {
  /** Text form of the address, IPv6 zone removed, IPv4-mapped IPv6 turned into IPv4. */
  address: string;
  family: 4 | 6;
  /** Canonical names; a leftmost `*` label makes a wildcard. */
  names: string[];
}

export interface HostsProblem {
  /** 1-based line in the parsed text. */
  line: number;
  message: string;
}

export interface ParsedHosts {
  entries: HostsEntry[];
  problems: HostsProblem[];
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Parses the text of a hosts file. */
export function parseHosts(text: string): ParsedHosts {
  const entries: HostsEntry[] = [];
  const problems: HostsProblem[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const hash = lines[i].indexOf("#");
    const fields = (hash >= 0 ? lines[i].slice(0, hash) : lines[i]).trim().split(/\s+/);
    if (fields[0] === "") continue;
    const r = parseHostsLine(fields);
    if (typeof r === "string") problems.push({ line: i + 1, message: r });
    else entries.push(r);
  }
  return { entries, problems };
}

/** One line split into fields: an entry, or why it is not one. */
export function parseHostsLine(fields: readonly string[]): HostsEntry | string {
  const ip = parseAddress(fields[0]);
  if (!ip) return `'${fields[0]}' is not an IP address`;
  if (fields.length < 2) return `no host name after ${fields[0]}`;
  const names: string[] = [];
  for (const f of fields.slice(1)) {
    const name = canonical(f);
    if (!validName(name)) return `'${f}' is not a valid host name`;
    if (!names.includes(name)) names.push(name);
  }
  return { ...ip, names };
}

function parseAddress(text: string): { address: string; family: 4 | 6 } | undefined {
  if (isIPv4(text)) return { address: text, family: 4 };
  const pct = text.indexOf("%");
  const bare = pct >= 0 ? text.slice(0, pct) : text;
  if (!isIPv6(bare)) return undefined;
  // Go's net.ParseIP (and so CoreDNS) treats ::ffff:a.b.c.d as IPv4.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped && isIPv4(mapped[1])) return { address: mapped[1], family: 4 };
  return { address: bare.toLowerCase(), family: 6 };
}

function validName(name: string): boolean {
  if (name === "." || name.length > 254) return false;
  const labels = name.slice(0, -1).split(".");
  return labels.every((l, i) => LABEL.test(l) || (i === 0 && l === "*" && labels.length > 1));
}
