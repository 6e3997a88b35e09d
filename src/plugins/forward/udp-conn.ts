// A connected UDP socket to one upstream: the kernel drops datagrams from any other address, and an
// ICMP "port unreachable" comes back as ECONNREFUSED at once instead of a timeout.

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";

export class UdpConn extends Conn {
  readonly proto = "udp";
  readonly #socket: dgram.Socket;

  private constructor(socket: dgram.Socket, onMismatch: () => void) {
    super(onMismatch);
    this.#socket = socket;
    socket.on("message", (pkt) => this.deliver(pkt));
    socket.on("error", (err) =>
      this.fail(new ExchangeError(ExchangeCode.NETWORK, err.message, { cause: err })),
    );
  }

  static open(host: string, port: number, onMismatch: () => void): Promise<UdpConn> {
    const socket = dgram.createSocket(isIPv6(host) ? "udp6" : "udp4");
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        socket.close();
        reject(new ExchangeError(ExchangeCode.NETWORK, err.message, { cause: err }));
      };
      socket.once("error", onError);
      socket.connect(port, host, () => {
        socket.off("error", onError);
        resolve(new UdpConn(socket, onMismatch));
      });
    });
  }

  protected send(query: Buffer): void {
    // A send error also arrives as an "error" event, which fails the exchange.
    this.#socket.send(query);
  }

  protected destroy(): void {
    this.#socket.close();
  }
}
