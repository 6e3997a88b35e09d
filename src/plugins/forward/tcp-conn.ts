// A TCP connection to one upstream (RFC 1035 4.2.2 / RFC 7766 framing: a 2-octet length before each
// message), kept open between queries by the pool. Writes before the connection is up are queued by
// Node, so opening needs no wait: a refused connect fails the first exchange.

import net from "node:net";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";
import { FrameReader, tcpFrame } from "../../dns/tcp-frames.ts";

export class TcpConn extends Conn {
  readonly proto = "tcp";
  readonly #socket: net.Socket;
  readonly #frames = new FrameReader();

  constructor(host: string, port: number, onMismatch: () => void) {
    super(onMismatch);
    const socket = net.connect({ host, port, noDelay: true });
    this.#socket = socket;
    socket.on("data", (chunk) => this.#read(chunk));
    socket.on("error", (err) =>
      this.fail(new ExchangeError(ExchangeCode.NETWORK, err.message, { cause: err })),
    );
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

  protected send(query: Buffer): void {
    this.#socket.write(tcpFrame(query));
  }

  protected destroy(): void {
    this.#socket.destroy();
  }
}
