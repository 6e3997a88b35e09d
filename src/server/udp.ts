// UDP listeners: one socket per address, replies sent from the socket the query came in on. This is
// the dgram engine (one datagram per system call and per callback); udp-batched.ts is the native one.
// On a wildcard address dgram cannot say which address a query was sent to, nor send from it: the
// reply leaves from the route's source, which on a host with several addresses of a family is not the
// one a query to the second was sent to, and clients with connected sockets (dig, glibc, musl) drop
// it (RFC 2181 4.1). The batched engine sends from the query's destination; this one says so once.

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { Logger } from "pino";
import type { Peer, Pipeline } from "./pipeline.ts";
import { isWildcardAddress } from "../dns/wildcard.ts";

/** The receive buffer the UDP sockets ask for (SO_RCVBUF; the kernel grants at most
 * net.core.rmem_max): queries that arrive while the process is held up (a collection, a busy CPU, a
 * neighbour starting on a shared port) wait here instead of being dropped. Linux's default, 208 KiB,
 * holds about 250 queries: 50 ms at 5,000 a second (issue 25). The batched engine asks the same
 * (native/udp.c). */
export const RECEIVE_BUFFER = 4 << 20;

export interface UdpOptions {
  address: string;
  port: number;
  /** Let several processes share the port (SO_REUSEPORT, Node >= 22.12): one core each. */
  reusePort: boolean;
}

/**
 * dgram resolves every send's address with dns.lookup, which for an IP literal still answers on the
 * next tick. Replies only ever go to the address a query came from, always a literal, so this answers
 * at once and the reply leaves in the same turn as the query arrived.
 */
export function literalLookup(
  address: string,
  family: unknown,
  callback: (err: Error | null, address: string, family: number) => void,
): void {
  // dgram passes the socket's family (4 or 6) as a number.
  callback(null, address, family === 6 ? 6 : 4);
}

/** What an instance needs of a UDP listener, whichever engine (udp-engine.ts) made it. */
export interface UdpListener {
  /** Binds and starts answering; resolves with the port bound (port 0 picks one). */
  bind(address: string, port: number): Promise<number>;
  /** Hands later queries to another pipeline (a reload); queries in flight finish on the old one. */
  use(pipeline: Pipeline): void;
  close(): Promise<void>;
  /** The address it was asked to bind (what a listener opened again in its place binds). */
  readonly address: string;
  /** Whether its close loses nothing another socket of the port's SO_REUSEPORT group could have
   * answered: it leaves the group first and answers what it already holds (the batched engine). */
  readonly leavesCleanly: boolean;
}

/** The wildcard warning is said once per process, not per listener. */
let warnedWildcard = false;

export class DgramListener implements UdpListener {
  readonly #socket: dgram.Socket;
  #pipeline: Pipeline;
  readonly #log: Logger;
  readonly address: string;
  /** dgram cannot leave a group: a close drops what the socket holds. */
  readonly leavesCleanly = false;
  #closed = false;
  #localAddress = "";
  #localPort = 0;
  readonly #peer: Peer = { proto: "udp", remoteAddress: "", remotePort: 0, localAddress: "", localPort: 0 };

  constructor(pipeline: Pipeline, opts: UdpOptions, log: Logger) {
    this.#pipeline = pipeline;
    this.#log = log;
    this.address = opts.address;
    const v6 = isIPv6(opts.address);
    this.#socket = dgram.createSocket({
      type: v6 ? "udp6" : "udp4",
      reuseAddr: true,
      reusePort: opts.reusePort,
      ipv6Only: v6,
      lookup: literalLookup,
      recvBufferSize: RECEIVE_BUFFER,
    });
    this.#socket.on("message", (msg, rinfo) => this.#onMessage(msg, rinfo));
    this.#socket.on("error", (err) => this.#log.error({ err }, "udp socket error"));
  }

  /** Hands later queries to another pipeline (a reload); queries in flight finish on the old one. */
  use(pipeline: Pipeline): void {
    this.#pipeline = pipeline;
  }

  bind(address: string, port: number): Promise<number> {
    if (isWildcardAddress(address) && !warnedWildcard) {
      warnedWildcard = true;
      this.#log.warn(
        { address },
        "udp (dgram engine): replies leave from the route's source address, not the one a query was " +
          "sent to; on a host with several addresses, clients that check it drop them: bind each " +
          "address (the bind plugin) or run the batched engine",
      );
    }
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#socket.once("error", onError);
      this.#socket.bind({ address, port, exclusive: false }, () => {
        this.#socket.off("error", onError);
        const local = this.#socket.address();
        this.#localAddress = local.address;
        this.#localPort = local.port;
        resolve(local.port);
      });
    });
  }

  #onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    // One object for every datagram: Pipeline.handle copies what a later reply needs of it.
    const peer = this.#peer;
    peer.remoteAddress = rinfo.address;
    peer.remotePort = rinfo.port;
    peer.localAddress = this.#localAddress;
    peer.localPort = this.#localPort;
    let out: Buffer | undefined | Promise<Buffer | undefined>;
    try {
      out = this.#pipeline.handle(msg, peer);
    } catch (err) {
      this.#log.error({ err }, "query failed");
      return;
    }
    if (out === undefined) return;
    if (out instanceof Promise) {
      out.then(
        (b) => b && this.#send(b, rinfo),
        (err: unknown) => this.#log.error({ err }, "query failed"),
      );
    } else {
      this.#send(out, rinfo);
    }
  }

  #send(b: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.#closed) return;
    // No callback: with one, Node schedules a tick per reply to report a send that already succeeded.
    // Without one it drops a send error silently, which to the client is a lost reply: it asks again.
    this.#socket.send(b, rinfo.port, rinfo.address);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }
}
