// What the DoH and gRPC listeners share: listening on an HTTP server, tracking its connections and
// HTTP/2 sessions, and closing it with a grace period for the requests being answered.

import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import type tls from "node:tls";
import type { Logger } from "pino";
import { rawSocketOf } from "./secure.ts";

/** How long connections may finish their requests once the listener closes. */
const CLOSE_GRACE_MS = 1000;

type Server = http.Server | http2.Http2Server | http2.Http2SecureServer;

export class HttpConnections {
  readonly #server: Server;
  readonly #what: string;
  readonly #log: Logger;
  /** HTTP/2 sessions, closed (GOAWAY once their streams are done) when the listener closes. */
  readonly #sessions = new Set<http2.ServerHttp2Session>();
  /** Every connection, HTTP/1.1 ones too: what is still open once the listener has closed is cut. */
  readonly #sockets = new Set<net.Socket>();

  /** Tracks `server`'s connections; an HTTP/2 session silent for `idleMs()` is closed. */
  constructor(server: Server, o: { what: string; log: Logger; idleMs: () => number }) {
    this.#server = server;
    this.#what = o.what;
    this.#log = o.log;
    server.on("connection", (socket: net.Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
    server.on("session", (session: http2.ServerHttp2Session) => {
      this.#sessions.add(session);
      session.setTimeout(o.idleMs(), () => session.close());
      session.once("close", () => this.#sessions.delete(session));
    });
    server.on("tlsClientError", (err: Error, socket: tls.TLSSocket) => {
      this.#log.debug({ err }, `${this.#what}: tls handshake failed`);
      socket.destroy();
      rawSocketOf(socket)?.destroy();
    });
  }

  /** Listens; the port bound. */
  listen(address: string, port: number, reusePort: boolean): Promise<number> {
    const server = this.#server;
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once("error", onError);
      server.listen({ host: address, port, ipv6Only: address.includes(":"), reusePort }, () => {
        server.off("error", onError);
        server.on("error", (err) => this.#log.error({ err }, `${this.#what} listener error`));
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Stops accepting; requests being answered finish, then their connections close (GOAWAY); what is
   * still open after CLOSE_GRACE_MS is cut. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      const server = this.#server;
      server.close(() => resolve());
      if ("closeIdleConnections" in server) server.closeIdleConnections();
      for (const session of this.#sessions) session.close();
      setTimeout(() => {
        for (const session of this.#sessions) session.destroy();
        for (const socket of this.#sockets) socket.destroy();
      }, CLOSE_GRACE_MS).unref();
    });
  }
}
