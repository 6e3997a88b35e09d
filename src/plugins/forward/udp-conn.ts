// A connected UDP socket to one upstream, for one query: the kernel drops datagrams from any other
// address or port, and an ICMP "port unreachable" comes back as ECONNREFUSED at once instead of a
// timeout. Each query gets a socket of its own, bound by the kernel to a fresh random ephemeral port
// (RFC 5452 9.2), and closed once the query is over: an attacker who learned one query's port (or
// floods one) learns nothing about the next. The number open at once is capped (UdpSocketCap).

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { Mismatch } from "../../client/reply-match.ts";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";
import { joinHostPort } from "../../dns/host-port.ts";

/** At most `max` upstream UDP sockets open at once (one forward block's), so that a flood of unique
 * names to a silent upstream, each query holding its socket for the read timeout, cannot use up the
 * process's file descriptors. A query that finds the cap reached is not sent (ExchangeCode.SOCKETS). */
export class UdpSocketCap {
  readonly max: number;
  open = 0;
  /** Date.now() of the last log line about the cap. */
  warnedAt = -Infinity;
  constructor(max: number) {
    this.max = max;
  }
}

/** dgram's lookup for an upstream, whose address is always an IP literal (upstream-address.ts): it
 * spares connect() a dns.lookup call and its tick, a quarter of what a socket per query costs. */
function literal(address: string, family: unknown, cb: (err: null, a: string, f: number) => void): void {
  cb(null, address, family === 6 ? 6 : 4);
}

export class UdpConn extends Conn {
  readonly proto = "udp";
  readonly #socket: dgram.Socket;
  readonly #cap: UdpSocketCap;
  /** The upstream, "host:port". */
  readonly #to: string;

  private constructor(
    socket: dgram.Socket,
    cap: UdpSocketCap,
    to: string,
    onReject: (why: Mismatch, packet?: Uint8Array) => void,
  ) {
    super(onReject);
    this.#socket = socket;
    this.#cap = cap;
    this.#to = to;
    socket.on("message", (pkt) => this.deliver(pkt));
    socket.on("error", (err) => this.fail(this.networkError(err)));
  }

  static open(
    to: { host: string; port: number },
    cap: UdpSocketCap,
    onReject: (why: Mismatch, packet?: Uint8Array) => void,
  ): Promise<UdpConn> {
    if (cap.open >= cap.max) {
      const why = `${cap.max} UDP sockets to upstreams are open, the most allowed: query not sent`;
      return Promise.reject(new ExchangeError(ExchangeCode.SOCKETS, why));
    }
    cap.open++;
    const socket = dgram.createSocket({ type: isIPv6(to.host) ? "udp6" : "udp4", lookup: literal });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        cap.open--;
        socket.close();
        reject(new ExchangeError(ExchangeCode.NETWORK, err.message, { cause: err }));
      };
      socket.once("error", onError);
      // Connecting binds the socket first, to port 0: the kernel picks a random free ephemeral port.
      socket.connect(to.port, to.host, () => {
        socket.off("error", onError);
        resolve(new UdpConn(socket, cap, joinHostPort(to.host, to.port), onReject));
      });
    });
  }

  protected send(query: Buffer): void {
    // A send error also arrives as an "error" event, which fails the exchange.
    this.#socket.send(query);
  }

  /** Read when the exchange fails, while the socket is still open: no system call on the way of a reply. */
  protected override route(): string {
    const local = this.#socket.address();
    return `udp ${joinHostPort(local.address, local.port)}->${this.#to}`;
  }

  protected destroy(): void {
    this.#cap.open--;
    this.#socket.close();
  }
}
