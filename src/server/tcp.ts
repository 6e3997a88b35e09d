// TCP listener (RFC 7766): 2-byte length framing, several pipelined queries per connection answered as
// they complete, an idle timeout, and caps on connections and on queries in flight per connection.

import net from "node:net";
import type { Logger } from "pino";
import type { Peer, Pipeline } from "./pipeline.ts";
import { FrameReader } from "../dns/tcp-frames.ts";
import { ReplyLane } from "./reply-lane.ts";

export interface TcpOptions {
  /** Close a connection with no query in flight after this long idle. */
  idleTimeoutMs: number;
  maxConnections: number;
  /** Stop reading from a connection while this many of its queries are being answered. */
  maxInFlight: number;
}

export const defaultTcpOptions: TcpOptions = { idleTimeoutMs: 10_000, maxConnections: 1000, maxInFlight: 64 };

export class TcpListener {
  readonly #server: net.Server;
  #pipeline: Pipeline;
  readonly #log: Logger;
  readonly #opts: TcpOptions;
  /** Ends a connection once nothing is in flight on it; set for every connection at close(). */
  readonly #drain = new Map<net.Socket, () => void>();

  constructor(pipeline: Pipeline, opts: TcpOptions, log: Logger) {
    this.#pipeline = pipeline;
    this.#opts = opts;
    this.#log = log;
    this.#server = net.createServer((socket) => this.#onConnection(socket));
    this.#server.maxConnections = opts.maxConnections;
  }

  /** Hands later queries to another pipeline (a reload); queries in flight finish on the old one. */
  use(pipeline: Pipeline): void {
    this.#pipeline = pipeline;
  }

  /** `reusePort`: several processes share the port (SO_REUSEPORT), as the UDP sockets do. */
  listen(address: string, port: number, reusePort = false): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#server.once("error", onError);
      this.#server.listen({ host: address, port, ipv6Only: net.isIPv6(address), reusePort }, () => {
        // A failure to listen is the caller's to report; errors once listening are logged here.
        this.#server.off("error", onError);
        this.#server.on("error", (err) => this.#log.error({ err }, "tcp listener error"));
        resolve((this.#server.address() as net.AddressInfo).port);
      });
    });
  }

  #closing = false;

  #onConnection(socket: net.Socket): void {
    socket.setNoDelay(true);
    socket.setTimeout(this.#opts.idleTimeoutMs);
    const peer = {
      proto: "tcp" as const,
      remoteAddress: socket.remoteAddress ?? "",
      remotePort: socket.remotePort ?? 0,
      localAddress: socket.localAddress ?? "",
      localPort: socket.localPort ?? 0,
    };
    const frames = new FrameReader();
    let inFlight = 0;
    // Set by a zero-length message: read nothing more, answer what is in flight, then close.
    let ended = false;
    // A multi-message reply (a zone transfer) is going out: read no more queries until it is done.
    let holding = false;
    const resume = () => {
      if (inFlight < this.#opts.maxInFlight && socket.isPaused() && !ended && !holding) socket.resume();
    };
    const lane = new ReplyLane(socket, this.#opts.idleTimeoutMs, (held) => {
      holding = held;
      if (held) socket.pause();
      else resume();
    });
    // Every close here is destroySoon, not end: the replies already queued are written, then the
    // connection is let go whole. end() alone half-closes it, and a client that keeps its own side
    // open would hold it (and a place under maxConnections) for good.
    const settled = () => {
      inFlight--;
      resume();
      if (inFlight === 0) socket.setTimeout(this.#opts.idleTimeoutMs);
      if (inFlight === 0 && (ended || this.#closing)) socket.destroySoon();
    };
    this.#drain.set(socket, () => {
      if (inFlight === 0) socket.destroySoon();
    });

    socket.on("data", (chunk: Buffer) =>
      frames.push(chunk, (msg) => {
        // A zero-length message is no DNS message: nothing after it can be trusted to be DNS either.
        if (msg.length === 0 || ended) {
          ended = true;
          socket.pause();
          if (inFlight === 0) socket.destroySoon();
          return false;
        }
        // One object per query: it is also what names the query's place in the lane.
        const query: Peer = { ...peer, write: (m) => lane.stream(query, m) };
        let out: Buffer | undefined | Promise<Buffer | undefined>;
        try {
          out = this.#pipeline.handle(msg, query);
        } catch (err) {
          this.#log.error({ err }, "query failed");
          return;
        }
        if (out instanceof Promise) {
          inFlight++;
          socket.setTimeout(0);
          if (inFlight >= this.#opts.maxInFlight) socket.pause();
          out
            .then(
              (m) => lane.end(query, m),
              (err: unknown) => {
                lane.end(query, undefined);
                this.#log.error({ err }, "query failed");
              },
            )
            .finally(settled);
        } else {
          lane.end(query, out);
        }
      }),
    );
    socket.on("timeout", () => {
      if (inFlight === 0) socket.destroySoon();
    });
    socket.on("error", (err) => this.#log.debug({ err }, "tcp connection error"));
    socket.on("close", () => {
      this.#drain.delete(socket);
    });
  }

  /** Stops accepting; open connections finish what they have in flight, then close. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#closing = true;
      this.#server.close(() => resolve());
      for (const end of this.#drain.values()) end();
    });
  }
}
