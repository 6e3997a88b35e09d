// The batched UDP engine's listener. The native socket (native/udp.c) reads every datagram of a
// wake-up with one recvmmsg and calls here once per batch; each datagram goes through the pipeline as
// with dgram, and the replies answered synchronously (answer-cache hits, most queries) leave together
// in one sendmmsg. Replies that take a promise are sent when it resolves, batched with whatever else is
// ready by then. The memory the two sides share is described at the top of native/udp.c.

import { createRequire } from "node:module";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { getSystemErrorName } from "node:util";
import type { Logger } from "pino";
import { MAX_UDP_REPLY, type Peer, type Pipeline } from "./pipeline.ts";
import type { UdpListener, UdpOptions } from "./udp.ts";

/** Where `npm ci` (native/build.ts, node-gyp) puts the addon: the same from src/ and from dist/. */
export const ADDON_PATH = join(import.meta.dirname, "..", "..", "build", "Release", "clusterdns_udp.node");

interface NativeSocket {
  bind(address: string, port: number, reusePort: boolean): { address: string; port: number };
  send(count: number): void;
  close(done: () => void): void;
  stats(): { dropped: number; sendErrors: number; backlog: number };
  leave(): void;
}

export interface Addon {
  UdpSocket: new (
    recv: Buffer,
    recvMeta: Uint32Array,
    send: Buffer,
    sendMeta: Uint32Array,
    onBatch: (count: number) => void,
  ) => NativeSocket;
  BATCH: number;
  SLOT: number;
  /** Words of a peer in the shared metadata: port, family, IPv6 scope id, 16 address bytes, then the
   * address the query was sent to (family, interface, 16 bytes), which its reply is sent from. */
  PEER: number;
  META: number;
  SEND_META: number;
  SEND_BYTES: number;
}

let loaded: Addon | Error | undefined;

/** The addon, or why it cannot be used here. Loaded once. */
export function loadAddon(): Addon | Error {
  if (loaded === undefined) {
    if (process.platform !== "linux") {
      loaded = new Error(`the batched UDP engine is for Linux only (this is ${process.platform})`);
    } else {
      try {
        loaded = createRequire(import.meta.url)(ADDON_PATH) as Addon;
      } catch (err) {
        loaded = new Error(`the batched UDP engine is not built (${(err as Error).message.split("\n")[0]})`);
      }
    }
  }
  return loaded;
}

/** How long a socket that left its SO_REUSEPORT group keeps answering what it holds before it closes:
 * the datagrams the kernel queued for it just before it left. */
const LEAVE_MS = 50;

/** How often a listener logs the replies it had to drop, at most. */
const DROP_LOG_MS = 10_000;

export class BatchedListener implements UdpListener {
  readonly #addon: Addon;
  readonly #sock: NativeSocket;
  readonly #recv: Buffer;
  readonly #recvMeta: Uint32Array;
  /** recvMeta's bytes, for the address bytes. */
  readonly #metaBytes: Buffer;
  readonly #send: Buffer;
  readonly #slots: Buffer[];
  readonly #sendMeta: Uint32Array;
  readonly #reusePort: boolean;
  readonly #log: Logger;
  readonly address: string;
  get leavesCleanly(): boolean {
    return this.#reusePort;
  }
  #pipeline: Pipeline;
  #queued = 0;
  #sendAt = 0;
  #flushQueued = false;
  #closed = false;
  #localAddress = "";
  #localPort = 0;
  readonly #peer: Peer = { proto: "udp", remoteAddress: "", remotePort: 0, localAddress: "", localPort: 0 };
  /** Address text by the address: clients ask again and again, a string per datagram is not free. */
  readonly #v4 = new Map<number, string>();
  readonly #v6 = new Map<string, string>();
  #dropped = 0;
  #dropTimer: NodeJS.Timeout | undefined;

  constructor(addon: Addon, pipeline: Pipeline, opts: UdpOptions, log: Logger) {
    this.#addon = addon;
    this.#pipeline = pipeline;
    this.#reusePort = opts.reusePort;
    this.#log = log;
    this.address = opts.address;
    const { BATCH, SLOT, META, SEND_META, SEND_BYTES } = addon;
    // Zeroed, so no page is touched until a datagram reaches it.
    this.#recv = Buffer.alloc(BATCH * SLOT);
    this.#recvMeta = new Uint32Array(BATCH * META);
    this.#metaBytes = Buffer.from(this.#recvMeta.buffer);
    this.#send = Buffer.alloc(SEND_BYTES);
    // A view of each receive slot, made once: the pipeline reads a datagram where it landed.
    this.#slots = Array.from({ length: BATCH }, (_, i) => this.#recv.subarray(i * SLOT, (i + 1) * SLOT));
    this.#sendMeta = new Uint32Array(BATCH * SEND_META);
    this.#sock = new addon.UdpSocket(this.#recv, this.#recvMeta, this.#send, this.#sendMeta, (n) =>
      this.#onBatch(n),
    );
  }

  use(pipeline: Pipeline): void {
    this.#pipeline = pipeline;
  }

  bind(address: string, port: number): Promise<number> {
    try {
      const local = this.#sock.bind(address, port, this.#reusePort);
      this.#localAddress = local.address;
      this.#localPort = local.port;
      this.#dropTimer = setInterval(() => this.#reportDrops(), DROP_LOG_MS);
      this.#dropTimer.unref();
      return Promise.resolve(local.port);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  #onBatch(count: number): void {
    if (count < 0) {
      const err = Object.assign(new Error(`recvmmsg ${getSystemErrorName(count)}`), {
        code: getSystemErrorName(count),
      });
      this.#log.error({ err }, "udp socket error");
      return;
    }
    const { META, BATCH, SEND_BYTES } = this.#addon;
    const meta = this.#recvMeta;
    const pipeline = this.#pipeline;
    for (let i = 0; i < count; i++) {
      const m = i * META;
      const len = meta[m];
      // One object for every datagram: Pipeline.handleInto copies what a later reply needs of it.
      const peer = this.#peer;
      peer.remoteAddress = this.#addressText(m + 1);
      peer.remotePort = meta[m + 1];
      peer.localAddress = this.#localAddress;
      peer.localPort = this.#localPort;
      // Room for the largest reply after what is queued, or send the batch first.
      if (this.#queued === BATCH || this.#sendAt + MAX_UDP_REPLY > SEND_BYTES) this.#flush();
      let out: number | Promise<Buffer | undefined>;
      try {
        // Read in place (the slot's view), answered in place (into the send buffer): a replayed or
        // lane answer allocates nothing.
        out = pipeline.handleInto(this.#slots[i], len, peer, this.#send, this.#sendAt);
      } catch (err) {
        this.#log.error({ err }, "query failed");
        continue;
      }
      if (typeof out === "number") {
        if (out > 0) this.#counted(out, meta, m + 1);
        continue;
      }
      const to = meta.slice(m + 1, m + 1 + this.#addon.PEER);
      out.then(
        (b) => b && this.#later(b, to),
        (err: unknown) => this.#log.error({ err }, "query failed"),
      );
    }
    this.#flush();
  }

  /** Counts a reply of `length` octets the pipeline wrote at #sendAt into the batch, for `to`, the PEER
   * words at `at`. */
  #counted(length: number, to: Uint32Array, at: number): void {
    const { SEND_META, PEER } = this.#addon;
    const sm = this.#sendMeta;
    const s = this.#queued * SEND_META;
    sm[s] = this.#sendAt;
    sm[s + 1] = length;
    for (let k = 0; k < PEER; k++) sm[s + 2 + k] = to[at + k];
    this.#sendAt += length;
    this.#queued++;
  }

  /** Adds a reply to the batch being built for `to`, the PEER words at `at`. */
  #queue(reply: Buffer, to: Uint32Array, at: number): void {
    const { BATCH, SEND_BYTES } = this.#addon;
    if (this.#queued === BATCH || this.#sendAt + reply.length > SEND_BYTES) this.#flush();
    // No UDP reply is larger than SEND_BYTES (they are at most 65535 octets and it is twice that).
    if (reply.length > SEND_BYTES) return;
    this.#send.set(reply, this.#sendAt);
    this.#counted(reply.length, to, at);
  }

  #flush(): void {
    if (this.#queued === 0) return;
    if (!this.#closed) this.#sock.send(this.#queued);
    this.#queued = 0;
    this.#sendAt = 0;
  }

  /** A reply whose query went through the plugin chain: sent with the next batch, or on the next
   * turn of the event loop with the others that resolved by then. */
  #later(reply: Buffer, to: Uint32Array): void {
    if (this.#closed) return;
    this.#queue(reply, to, 0);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    setImmediate(() => {
      this.#flushQueued = false;
      this.#flush();
    });
  }

  /** The peer's address as dgram spells it (libuv's inet_ntop, IPv6 with %interface when scoped). */
  #addressText(at: number): string {
    const meta = this.#recvMeta;
    if (meta[at + 1] === 4) {
      // The 4 address bytes read as one number: a key, not an address in any byte order.
      const key = meta[at + 3];
      let text = this.#v4.get(key);
      if (text === undefined) {
        const b = this.#metaBytes;
        const o = (at + 3) * 4;
        text = `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
        remember(this.#v4, key, text);
      }
      return text;
    }
    const o = (at + 3) * 4;
    const key = this.#metaBytes.toString("latin1", o, o + 16) + meta[at + 2];
    let text = this.#v6.get(key);
    if (text === undefined) {
      text = ipv6Text(this.#metaBytes, o, meta[at + 2]);
      remember(this.#v6, key, text);
    }
    return text;
  }

  #reportDrops(): void {
    const { dropped, sendErrors } = this.#sock.stats();
    const now = dropped + sendErrors;
    if (now > this.#dropped) {
      this.#log.warn(
        { dropped, sendErrors, since: now - this.#dropped },
        "udp: replies dropped (send buffer full or refused by the kernel)",
      );
    }
    this.#dropped = now;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#reusePort) {
      // Another process may share the port (a node-local restart): leave the group first (native/udp.c
      // leave), so that new queries go to it and none is left queued here at the close.
      this.#sock.leave();
      await new Promise((r) => setTimeout(r, LEAVE_MS));
      if (this.#closed) return;
    }
    clearInterval(this.#dropTimer);
    // The native close first reads and answers what the socket still holds (native/udp.c).
    const closed = new Promise<void>((resolve) => this.#sock.close(() => resolve()));
    this.#closed = true;
    return closed;
  }
}

/** Bounded: a flood from many addresses must not grow the map without end. */
const ADDRESS_CACHE = 4096;

function remember<K>(m: Map<K, string>, key: K, text: string): void {
  if (m.size >= ADDRESS_CACHE) m.clear();
  m.set(key, text);
}

/** An IPv6 address as libuv's inet_ntop writes it (which is what dgram reports): the longest run of
 * two or more zero words as "::" (the first of equal runs), lowercase hex without leading zeros, and
 * the last 32 bits in dotted quads for IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d)
 * addresses. A link-local address gets its interface, as Node appends it. */
export function ipv6Text(b: Uint8Array, at: number, scope: number): string {
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((b[at + 2 * i] << 8) | b[at + 2 * i + 1]);
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) best = -1;
  let text = "";
  for (let i = 0; i < 8; i++) {
    if (best !== -1 && i >= best && i < best + bestLen) {
      if (i === best) text += ":";
      continue;
    }
    if (i !== 0) text += ":";
    if (i === 6 && best === 0 && (bestLen === 6 || (bestLen === 5 && words[5] === 0xffff))) {
      text += `${b[at + 12]}.${b[at + 13]}.${b[at + 14]}.${b[at + 15]}`;
      break;
    }
    text += words[i].toString(16);
  }
  if (best !== -1 && best + bestLen === 8) text += ":";
  // fe80::/10 with a scope: Node appends the interface's name.
  if (scope !== 0 && b[at] === 0xfe && (b[at + 1] & 0xc0) === 0x80) text += `%${interfaceName(scope)}`;
  return text;
}

function interfaceName(index: number): string {
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (addrs?.some((a) => a.family === "IPv6" && a.scopeid === index)) return name;
  }
  return String(index);
}
