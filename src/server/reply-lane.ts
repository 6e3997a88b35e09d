// The replies of one TCP connection on their way to its socket. A reply of one message is written the
// moment it is ready, in whatever order the queries finish (RFC 7766 7). A reply of several messages
// (a zone transfer, Request.stream) holds the lane from its first message to its last: other replies
// wait behind it, so a client reads the transfer's messages back to back and never has to pick them
// out of other answers. A stream's every write waits until the socket can take more and for a turn of
// the event loop: a fast client cannot make the producer run ahead of the socket, nor a long transfer
// keep UDP queries waiting. While a stream holds the lane the listener reads no more queries from the
// connection (`onHold`), so replies that wait behind a slow reader's transfer cannot pile up.

import type net from "node:net";
import { tcpFrame } from "../dns/tcp-frames.ts";

export class ReplyLane {
  readonly #socket: net.Socket;
  readonly #stallMs: number;
  /** The query whose multi-message reply is going out, if any. */
  #holder: object | undefined;
  /** Writes that wait for the holder's last message, in order. */
  #waiting: (() => void)[] = [];
  readonly #onHold: (held: boolean) => void;

  /** `stallMs`: a stream whose socket takes nothing for this long is dropped with its connection.
   * `onHold(true)` when a stream takes the lane, `onHold(false)` once it and what waited are out. */
  constructor(socket: net.Socket, stallMs: number, onHold: (held: boolean) => void = () => {}) {
    this.#socket = socket;
    this.#stallMs = stallMs;
    this.#onHold = onHold;
    // Whatever waits finds the socket gone and gives up.
    socket.once("close", () => this.#release());
  }

  /** Writes the last (or only) message of `owner`'s reply; undefined when it sends none. Either way
   * `owner` lets go of the lane. */
  end(owner: object, msg: Buffer | undefined): void {
    if (this.#holder !== undefined && this.#holder !== owner) {
      this.#waiting.push(() => this.end(owner, msg));
      return;
    }
    if (msg !== undefined && !this.#socket.destroyed) this.#socket.write(tcpFrame(msg));
    if (this.#holder === owner) {
      this.#holder = undefined;
      this.#release();
      if (this.#holder === undefined) this.#onHold(false);
    }
  }

  /** Writes one message of `owner`'s multi-message reply; false once the connection is gone. */
  stream(owner: object, msg: Buffer): Promise<boolean> {
    if (this.#socket.destroyed) return Promise.resolve(false);
    if (this.#holder !== undefined && this.#holder !== owner) {
      return new Promise((resolve) => this.#waiting.push(() => void this.stream(owner, msg).then(resolve)));
    }
    if (this.#holder === undefined) {
      this.#holder = owner;
      this.#onHold(true);
    }
    if (!this.#socket.write(tcpFrame(msg))) return this.#drained();
    return new Promise((resolve) => setImmediate(() => resolve(!this.#socket.destroyed)));
  }

  /** Runs what waited, until a stream takes the lane again. */
  #release(): void {
    if (this.#socket.destroyed) this.#holder = undefined;
    while (this.#holder === undefined && this.#waiting.length > 0) this.#waiting.shift()!();
  }

  #drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = this.#socket;
      const done = () => {
        clearTimeout(timer);
        socket.off("drain", done);
        socket.off("close", done);
        resolve(!socket.destroyed);
      };
      const timer = setTimeout(() => socket.destroy(), this.#stallMs);
      socket.once("drain", done);
      socket.once("close", done);
    });
  }
}
