// Who else serves the node-local addresses: the UDP sockets of this network namespace that serve DNS
// on one of them (from /proc/net/udp and udp6, which list every process's), less this process's own
// (its file descriptors name their socket inodes). This tells a second clusterdns taking over (a
// restart), a node-local-dns still running, and whether the node may be torn down when this one stops.
// A socket serves when it is bound to the address and the served port and connected to nothing: a
// client's socket connected to the address (a hostNetwork process asking 10.96.0.10) has the address
// as its local one too, on a port of its own, and a closing clusterdns connects its sockets to its own
// address to leave the port's group; neither answers a query.

import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { endianness } from "node:os";

export interface Reader {
  /** The text of a /proc file, or undefined when there is none. */
  read(path: string): string | undefined;
  /** This process's socket inodes. */
  ownInodes(): Set<string>;
}

export const procReader: Reader = {
  read(path) {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
  ownInodes() {
    const out = new Set<string>();
    let fds: string[];
    try {
      fds = readdirSync("/proc/self/fd");
    } catch {
      return out;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
        if (m) out.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
    return out;
  },
};

/** How many unconnected UDP sockets of other processes are bound to each address on `port`. */
export function othersServing(
  addresses: readonly string[],
  port: number,
  reader: Reader = procReader,
): Map<string, number> {
  const wanted = new Map(addresses.map((a) => [procAddress(a), a]));
  const counts = new Map(addresses.map((a) => [a, 0]));
  const own = reader.ownInodes();
  for (const file of ["/proc/net/udp", "/proc/net/udp6"]) {
    const text = reader.read(file);
    if (text === undefined) continue;
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (f.length < 10) continue;
      const [local, localPort] = f[1].split(":");
      const address = wanted.get(local.toUpperCase());
      if (address === undefined || parseInt(localPort, 16) !== port) continue;
      if (!/^0+:0000$/.test(f[2]) || own.has(f[9])) continue;
      counts.set(address, counts.get(address)! + 1);
    }
  }
  return counts;
}

/** True when another process serves every one of the addresses on `port`. */
export function allServedByOthers(
  addresses: readonly string[],
  port: number,
  reader: Reader = procReader,
): boolean {
  return [...othersServing(addresses, port, reader).values()].every((n) => n > 0);
}

/** The address part of /proc/net/udp's local_address: the kernel's 32-bit words printed in host
 * order. */
export function procAddress(address: string, order = endianness()): string {
  const bytes = addressBytes(address);
  let hex = "";
  for (let i = 0; i < bytes.length; i += 4) {
    const word = [...bytes.subarray(i, i + 4)];
    if (order === "LE") word.reverse();
    hex += word.map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return hex.toUpperCase();
}

function addressBytes(address: string): Uint8Array {
  if (!address.includes(":")) return Uint8Array.from(address.split(".").map(Number));
  const [head, tail] = address.split("::");
  const parts = (s: string | undefined) => (s ? s.split(":") : []);
  const h = parts(head);
  const t = tail === undefined ? [] : parts(tail);
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}
