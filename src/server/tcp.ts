// TCP listener (RFC 7766): accepts connections up to a cap, hands each to a TcpConnection (framing,
// pipelining, per-connection limits), and enforces the time limits of every connection from one timer.
// At the cap, a new connection takes the place of the connection idle the longest (RFC 7766 6.2.3:
// a server under pressure may close idle connections), so clients that open connections and send
// nothing cannot shut others out; only when every connection has a query in flight is the new one
// refused.
// With TLS settings it serves DNS over TLS (RFC 7858): each accepted socket goes through a TLS handshake
// (bounded by the read timeout, and counted against the cap while it runs) and then is a connection
// like any other, over the decrypted stream: same framing, pipelining, limits and deadlines.

import net from "node:net";
import tls from "node:tls";
import type { Logger } from "pino";
import type { Pipeline } from "./pipeline.ts";
import type { TlsSettings } from "../setup/block.ts";
import { TcpConnection, type TcpOptions, type TcpTimeouts } from "./tcp-connection.ts";
import { clientAllowed, keyLog, rawSocketOf, tlsOptions } from "./secure.ts";

export type { TcpOptions, TcpTimeouts };

/** CoreDNS's defaults for its TCP servers (its `timeouts` plugin changes them): read 3 s, write 5 s,
 * idle 10 s. At most 1000 connections, 64 queries in flight on each. */
export const defaultTcpOptions: TcpOptions = {
  readMs: 3000,
  writeMs: 5000,
  idleMs: 10_000,
  maxConnections: 1000,
  maxInFlight: 64,
};

/** How often deadlines are checked: a connection lives at most this much past one. */
const CHECK_MS = 250;
/** At most one warning this often about connections closed or refused at the cap. */
const WARN_EVERY_MS = 10_000;

export class TcpListener {
  readonly #server: net.Server;
  /** The address it was asked to listen on: what a reload's new listener group takes it over by. */
  address = "";
  pipeline: Pipeline;
  opts: TcpOptions;
  readonly log: Logger;
  readonly #conns = new Set<TcpConnection>();
  #timer: NodeJS.Timeout | undefined;
  #closing = false;
  /** Connections closed to make room, and refused, since the last warning. */
  #evicted = 0;
  #refused = 0;
  #warnedAt = -Infinity;
  /** DNS over TLS: the (never listening) TLS server that runs the handshakes of accepted sockets. */
  #tls: { server: tls.Server; settings: TlsSettings } | undefined;
  /** Accepted sockets whose TLS handshake is not done yet. */
  readonly #handshaking = new Set<net.Socket>();

  constructor(pipeline: Pipeline, opts: TcpOptions, log: Logger, secure?: TlsSettings) {
    this.pipeline = pipeline;
    this.opts = opts;
    this.log = log;
    // allowHalfOpen: a client's FIN ends only its side; the replies to what it sent still go out
    // (tcp-connection.ts), where Node would otherwise end ours at once and drop them.
    this.#server = net.createServer({ allowHalfOpen: true }, (socket) => this.#onConnection(socket));
    this.#useTls(secure);
  }

  /** Hands later queries to another pipeline (a reload), with its limits and certificate; queries in
   * flight finish on the old one. */
  use(pipeline: Pipeline, opts: TcpOptions = this.opts, secure?: TlsSettings): void {
    this.pipeline = pipeline;
    this.opts = opts;
    this.#useTls(secure);
  }

  /** New connections get a handshake with `settings`; without (a reload removed `tls`), plain TCP. */
  #useTls(settings: TlsSettings | undefined): void {
    if (settings === undefined) {
      this.#tls?.server.close();
      this.#tls = undefined;
      return;
    }
    const server = tls.createServer({
      ...tlsOptions(settings),
      allowHalfOpen: true,
      handshakeTimeout: this.opts.readMs,
    });
    server.on("secureConnection", (socket) => this.#onSecure(socket, settings));
    // A failed or timed-out handshake (plain DNS sent to the port; a client that says nothing for the
    // read timeout) leaves the socket open unless it is let go here.
    server.on("tlsClientError", (err, socket) => {
      this.log.debug({ err }, "tls handshake failed");
      socket.destroy();
      rawSocketOf(socket)?.destroy();
    });
    keyLog(server, settings, this.log);
    this.#tls?.server.close();
    this.#tls = { server, settings };
  }

  /** `reusePort`: several processes share the port (SO_REUSEPORT), as the UDP sockets do. */
  listen(address: string, port: number, reusePort = false): Promise<number> {
    this.address = address;
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#server.once("error", onError);
      this.#server.listen({ host: address, port, ipv6Only: net.isIPv6(address), reusePort }, () => {
        // A failure to listen is the caller's to report; errors once listening are logged here.
        this.#server.off("error", onError);
        this.#server.on("error", (err) => this.log.error({ err }, "tcp listener error"));
        resolve((this.#server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Open connections (tests and the soak's TCP abuse part look), handshakes under way included. */
  get connections(): number {
    return this.#conns.size + this.#handshaking.size;
  }

  #onConnection(socket: net.Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    if (this.connections >= this.opts.maxConnections && !this.#makeRoom()) {
      this.#refused++;
      this.#warn();
      socket.destroy();
      return;
    }
    if (this.#tls !== undefined) {
      this.#handshaking.add(socket);
      socket.once("close", () => this.#handshaking.delete(socket));
      this.#tls.server.emit("connection", socket);
      return;
    }
    this.#serve(socket);
  }

  /** A TLS handshake is done: a client that client_auth turns away is let go, the others served. */
  #onSecure(socket: tls.TLSSocket, settings: TlsSettings): void {
    const raw = rawSocketOf(socket);
    if (raw !== undefined) this.#handshaking.delete(raw);
    if (this.#closing || !clientAllowed(settings, socket)) {
      if (!this.#closing) this.log.debug({ client: socket.remoteAddress }, "tls: client certificate refused");
      socket.destroy();
      return;
    }
    this.#serve(socket);
  }

  #serve(socket: net.Socket): void {
    const c = new TcpConnection(socket, this);
    this.#conns.add(c);
    socket.on("close", () => {
      this.#conns.delete(c);
      if (this.#conns.size === 0) this.#stopChecks();
    });
    this.#timer ??= setInterval(() => this.#check(), CHECK_MS).unref();
  }

  /** Closes the connection idle the longest (the earliest deadline among those with nothing in
   * flight); false when every connection is busy. */
  #makeRoom(): boolean {
    let oldest: TcpConnection | undefined;
    for (const c of this.#conns)
      if (c.idle && (oldest === undefined || c.deadline < oldest.deadline)) oldest = c;
    if (oldest === undefined) return false;
    this.#conns.delete(oldest);
    oldest.socket.destroy();
    this.#evicted++;
    this.#warn();
    return true;
  }

  #warn(): void {
    const now = performance.now();
    if (now - this.#warnedAt < WARN_EVERY_MS) return;
    this.#warnedAt = now;
    this.log.warn(
      { max: this.opts.maxConnections, closedIdle: this.#evicted, refused: this.#refused },
      "tcp: connection limit reached",
    );
    this.#evicted = 0;
    this.#refused = 0;
  }

  #check(): void {
    const now = performance.now();
    for (const c of this.#conns) c.check(now);
  }

  #stopChecks(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Stops accepting; open connections finish what they have in flight, then close. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#closing = true;
      this.#server.close(() => {
        this.#stopChecks();
        resolve();
      });
      this.#tls?.server.close();
      for (const s of this.#handshaking) s.destroy();
      for (const c of this.#conns) c.end();
    });
  }
}
