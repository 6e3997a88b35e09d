// How much of a TCP connection's replies its client has not taken yet: what Node still holds
// (writableLength) plus what the kernel holds, sent and not acknowledged (SIOCOUTQ, through the small
// addon native/tcp-queue.c). Node's part alone says little: the kernel takes several MB from a client
// that reads nothing (its receive buffer and our send buffer) before Node holds a single octet, so a
// client that pipelines queries and never reads would be answered to the end. Where the addon is not
// built (not Linux, no compiler), only Node's part is counted and says so once in the log.

import { createRequire } from "node:module";
import { join } from "node:path";
import type net from "node:net";

/** Where `npm ci` (native/build.ts) puts the probe: the same from src/ and from dist/. */
export const PROBE_PATH = join(import.meta.dirname, "..", "..", "build", "Release", "clusterdns_tcp.node");

interface Probe {
  /** Octets in the socket's kernel send queue not yet acknowledged; -1 when it cannot tell. */
  unacked(fd: number): number;
}

let probe: Probe | Error | undefined;

/** The probe, or why it cannot be used here. Loaded once. */
export function loadProbe(): Probe | Error {
  if (probe === undefined) {
    try {
      if (process.platform !== "linux")
        throw new Error(`SIOCOUTQ is Linux only, this is ${process.platform}`);
      probe = createRequire(import.meta.url)(PROBE_PATH) as Probe;
    } catch (err) {
      probe = new Error(`the TCP send-queue probe is not built (${(err as Error).message.split("\n")[0]})`);
    }
  }
  return probe;
}

/** The socket's file descriptor (libuv's TCP handle has it on Unix), or -1. A TLS socket's is its TCP
 * socket's (Node's `_parent`): what waits there is the replies, encrypted. */
function fdOf(socket: net.Socket): number {
  type Inner = { _handle?: { fd?: number } | null; _parent?: Inner | null };
  const s = socket as unknown as Inner;
  const fd = (s._parent ?? s)._handle?.fd;
  return typeof fd === "number" ? fd : -1;
}

/** Octets of replies written to `socket` that its client has not acknowledged: Node's and the kernel's. */
export function unread(socket: net.Socket): number {
  const p = loadProbe();
  const kernel = p instanceof Error ? 0 : p.unacked(fdOf(socket));
  return socket.writableLength + Math.max(0, kernel);
}
