// A TCP connection to one upstream (RFC 1035 4.2.2 / RFC 7766 framing: a 2-octet length before each
// message), kept open between queries by the pool. Writes before the connection is up are queued by
// Node, so opening needs no wait: a refused connect fails the first exchange.

import net from "node:net";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";

export class TcpConn extends Conn {
  readonly proto = "tcp";
  readonly #socket: net.Socket;
  #buf: Buffer = Buffer.alloc(0);

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
    let buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    while (buf.length >= 2) {
      const len = buf.readUInt16BE(0);
      if (buf.length < 2 + len) break;
      const frame = buf.subarray(2, 2 + len);
      buf = buf.subarray(2 + len);
      this.deliver(frame);
      if (this.closed) return;
    }
    this.#buf = buf;
  }

  protected send(query: Buffer): void {
    const frame = Buffer.allocUnsafe(2 + query.length);
    frame.writeUInt16BE(query.length, 0);
    query.copy(frame, 2);
    this.#socket.write(frame);
  }

  protected destroy(): void {
    this.#socket.destroy();
  }
}
