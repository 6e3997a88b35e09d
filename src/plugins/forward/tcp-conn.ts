// A TCP connection to one upstream (RFC 1035 4.2.2 / RFC 7766 framing: a 2-octet length before each
// message), or the same inside TLS (DNS over TLS, RFC 7858 3.3: the framing is TCP's), kept open
// between queries by the pool. Writes before the connection is up are queued by Node (before the TLS
// handshake too), so opening needs no wait: a refused connect or a failed handshake fails the first
// exchange.

import net from "node:net";
import tls from "node:tls";
import type { Mismatch } from "../../client/reply-match.ts";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";
import { joinHostPort } from "../../dns/host-port.ts";
import { FrameReader, tcpFrame } from "../../dns/tcp-frames.ts";

export class StreamConn extends Conn {
  readonly proto: "tcp" | "tcp-tls";
  readonly #socket: net.Socket;
  readonly #frames = new FrameReader();
  /** The upstream, "host:port". */
  readonly #to: string;

  constructor(
    socket: net.Socket,
    proto: "tcp" | "tcp-tls",
    to: string,
    onReject: (why: Mismatch, packet?: Uint8Array) => void,
  ) {
    super(onReject);
    this.proto = proto;
    this.#socket = socket;
    this.#to = to;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("error", (err) => this.fail(this.networkError(err)));
    socket.on("close", () =>
      this.fail(new ExchangeError(ExchangeCode.CLOSED, "upstream closed the connection")),
    );
  }

  #read(chunk: Buffer): void {
    this.#frames.push(chunk, (frame) => {
      this.deliver(frame);
      return !this.closed;
    });
  }

  /** TLS runs over a TCP connection, which is what Go's errors name, as "tcp". */
  protected override route(): string {
    const s = this.#socket;
    // Not connected (yet): no local address.
    if (s.localAddress === undefined || s.localPort === undefined) return `tcp ${this.#to}`;
    return `tcp ${joinHostPort(s.localAddress, s.localPort)}->${this.#to}`;
  }

  protected send(query: Buffer): void {
    this.#socket.write(tcpFrame(query));
  }

  protected destroy(): void {
    this.#socket.destroy();
  }
}

export function tcpConn(
  host: string,
  port: number,
  onReject: (why: Mismatch, packet?: Uint8Array) => void,
): StreamConn {
  return new StreamConn(net.connect({ host, port }), "tcp", joinHostPort(host, port), onReject);
}

/** What a DNS-over-TLS connection needs besides the address: the forward's `tls` files and name. */
export interface TlsSettings {
  /** PEM: the CAs that may sign the upstream's certificate; undefined for the system's. */
  ca?: Buffer;
  /** PEM: our client certificate and its key, for upstreams that ask for one. */
  cert?: Buffer;
  key?: Buffer;
  /** The name the upstream's certificate must hold (and SNI); without it, its IP address. */
  servername?: string;
}

/** What a DoT connection carries over from the pool: `session` resumes an earlier one's TLS session,
 * `onSession` gets new tickets, `onReject` hears of replies that fail the checks. */
export interface TlsResume {
  session: Buffer | undefined;
  onSession: (session: Buffer) => void;
  onReject: (why: Mismatch, packet?: Uint8Array) => void;
}

/** A DoT connection to host:port with settings `s`. */
export function tlsConn(
  host: string,
  port: number,
  s: TlsSettings,
  { session, onSession, onReject }: TlsResume,
): StreamConn {
  const socket = tls.connect({
    host,
    port,
    ca: s.ca,
    cert: s.cert,
    key: s.key,
    servername: s.servername,
    session,
  });
  socket.on("session", onSession);
  return new StreamConn(socket, "tcp-tls", joinHostPort(host, port), onReject);
}
