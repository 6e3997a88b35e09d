// What UDP and TCP connections to an upstream share: one query in flight at a time, a reply taken only
// when it matches (reply-match.ts), every other packet counted by why it was not, a timeout, and errors
// with stable codes.

import type { Msg } from "../../dns/message.ts";
import type { Expect, Mismatch } from "../../client/reply-match.ts";
import { checkReply } from "../../client/reply-match.ts";

/** How a query goes upstream: plain UDP or TCP, TCP inside TLS (CoreDNS's name for DoT), or DNS over
 * HTTPS. */
export type Proto = "udp" | "tcp" | "tcp-tls" | "https";

export const ExchangeCode = {
  /** No matching reply within the time allowed. */
  TIMEOUT: "CDNS_ERR_FORWARD_TIMEOUT",
  /** The connection closed (or was closed by us) before the reply came. */
  CLOSED: "CDNS_ERR_FORWARD_CLOSED",
  /** The socket reported an error: refused, reset, unreachable. */
  NETWORK: "CDNS_ERR_FORWARD_NETWORK",
  /** A reply matched all but the 0x20 case of the name: spoofed, or an upstream that does not echo case. */
  CASE: "CDNS_ERR_FORWARD_CASE",
  /** The cap on open UDP sockets to upstreams was reached: the query was not sent. */
  SOCKETS: "CDNS_ERR_FORWARD_SOCKETS",
} as const;

/** An exchange with an upstream that got no reply. */
export class ExchangeError extends Error {
  readonly code: (typeof ExchangeCode)[keyof typeof ExchangeCode];
  constructor(code: ExchangeError["code"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ExchangeError";
    this.code = code;
  }
}

interface Pending {
  e: Expect;
  resolve(m: Msg): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** `P` is the transport's name: forward's `Proto`s, or grpc's own "grpc". */
export abstract class Conn<P extends string = Proto> {
  abstract readonly proto: P;
  /** Date.now() when the last exchange ended: the pool expires connections idle too long. */
  idleSince = 0;
  /** Date.now() when it was opened: the pool stops reusing connections older than max_age. */
  readonly openedAt = Date.now();
  #closed = false;
  #pending: Pending | undefined;
  readonly #onReject: (why: Mismatch, packet?: Uint8Array) => void;

  /** `onReject` hears of every packet that is not the reply, and why. */
  constructor(onReject: (why: Mismatch, packet?: Uint8Array) => void) {
    this.#onReject = onReject;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends `query` (a whole DNS message; its ID and question are `e`'s) and waits for its reply. */
  exchange(query: Buffer, e: Expect, timeoutMs: number): Promise<Msg> {
    if (this.#closed) return Promise.reject(new ExchangeError(ExchangeCode.CLOSED, "connection is closed"));
    if (this.#pending) throw new Error("forward: a connection carries one query at a time");
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A late reply would arrive on a connection that no longer expects it: do not reuse it.
        // Go's words, which operators' `errors { consolidate ... "i/o timeout$" }` lines match.
        this.fail(new ExchangeError(ExchangeCode.TIMEOUT, `read ${this.route()}: i/o timeout`));
      }, timeoutMs);
      this.#pending = { e, resolve, reject, timer };
      this.send(query, timeoutMs);
    });
  }

  /** One packet from the upstream: the reply when it matches, else dropped and counted, and why is
   * returned. A wrong case ends the exchange: the upstream retries on a new socket (upstream.ts), since
   * what came is either a forgery whose sender knows this port, or the real reply of an upstream that
   * does not echo case. */
  protected deliver(pkt: Buffer): Mismatch | undefined {
    const p = this.#pending;
    if (!p) {
      // No query in flight: a late reply (its query timed out) or a forgery.
      this.#onReject("id", pkt);
      return "id";
    }
    const m = checkReply(pkt, p.e);
    if (typeof m === "string") {
      this.#onReject(m, pkt);
      if (m === "case")
        this.fail(new ExchangeError(ExchangeCode.CASE, "the reply's name is not in the query's case"));
      return m;
    }
    clearTimeout(p.timer);
    this.#pending = undefined;
    this.idleSince = Date.now();
    p.resolve(m);
    return undefined;
  }

  /** Ends the connection; a query in flight fails with `err`. */
  protected fail(err: ExchangeError): void {
    if (!this.#closed) {
      this.#closed = true;
      this.destroy();
    }
    const p = this.#pending;
    if (p) {
      clearTimeout(p.timer);
      this.#pending = undefined;
      p.reject(err);
    }
  }

  /** The connection as Go's net errors name it ("udp 10.0.0.1:41000->10.0.0.2:53"), so that what is
   * logged of it reads as CoreDNS's; the transport alone where there is no such pair. */
  protected route(): string {
    return this.proto;
  }

  /** An error of the socket (refused, reset, unreachable), naming the connection it happened on. */
  protected networkError(err: Error): ExchangeError {
    return new ExchangeError(ExchangeCode.NETWORK, `${this.route()}: ${err.message}`, { cause: err });
  }

  close(): void {
    // No query in flight (a DoH or gRPC exchange's end): no error to build, whose stack costs microseconds.
    if (this.#pending !== undefined) this.fail(new ExchangeError(ExchangeCode.CLOSED, "connection closed"));
    else if (!this.#closed) {
      this.#closed = true;
      this.destroy();
    }
  }

  /** Sends the query; `timeoutMs` is how long its reply is waited for. */
  protected abstract send(query: Buffer, timeoutMs: number): void;
  protected abstract destroy(): void;
}
