// One client connection of the TCP listener (tcp.ts): framing, queries answered as they complete
// (pipelined, RFC 7766 6.2.1.1) through its reply lane (reply-lane.ts: a multi-message reply, a zone
// transfer, goes out whole before the others), and the limits that keep one client from holding the
// server:
// - queries in flight: at most maxInFlight answered at once; reading stops until one is done;
// - replies the client does not read: reading stops while Node holds more than its high-water mark of
//   unsent replies, while more than MAX_UNREAD octets of replies wait unacknowledged in the kernel
//   (send-queue.ts: the kernel takes MBs from a client that reads nothing), and while a transfer holds
//   the lane; replies that make no progress for `write` close the connection;
// - turns: answers from the cache are synchronous, so a backlog of pipelined queries would be answered
//   to its end in one go while UDP and every other connection wait. A connection answers at most
//   TURN_QUERIES queries, or for TURN_MS, then lets the event loop run before it goes on;
// - time: the first query must arrive whole within `read` of connecting, each later one within `idle`
//   of the last reply (RFC 7766 6.2.3). A deadline is not moved by octets that arrive, only by whole
//   queries: a query sent one octet a second (slowloris) cannot hold the connection past it.
// A client that half-closes (sends its FIN after its queries) gets the replies to every query it sent,
// the ones still being answered too, and then the connection closes (RFC 7766: a query read is a query
// answered). The listener accepts with allowHalfOpen, so Node does not end our side at the client's FIN.
// The listener checks the deadlines (check()) and closes the longest idle connection when full.
// Over TLS (a tls:// listener), the replies to a query that carries an EDNS Padding option are padded
// here, on their way out (padding.ts): what the answer store replays stays unpadded.

import type net from "node:net";
import type { Logger } from "pino";
import type { Peer, Pipeline } from "./pipeline.ts";
import { FrameReader } from "../dns/tcp-frames.ts";
import { ReplyLane } from "./reply-lane.ts";
import { unread } from "./send-queue.ts";
import { RESPONSE_BLOCK, asksPadding, padded } from "../dns/padding.ts";

export interface TcpTimeouts {
  /** From connecting until the first query is whole. */
  readMs: number;
  /** A reply waiting to be written with no octet taken by the client for this long closes it. */
  writeMs: number;
  /** From the last reply (nothing in flight) until the next query is whole. */
  idleMs: number;
}

export interface TcpOptions extends TcpTimeouts {
  maxConnections: number;
  /** Stop reading from a connection while this many of its queries are being answered. */
  maxInFlight: number;
}

const EMPTY = Buffer.alloc(0);

/** Queries a connection answers in one turn of the event loop, at most, and for how long. */
export const TURN_QUERIES = 32;
const TURN_MS = 1;
/** Octets of replies a client may leave unread (in Node and the kernel) before it is read no more. */
export const MAX_UNREAD = 64 * 1024;
/** The kernel's queue is looked at each time this many octets more were written. */
const PROBE_EVERY = 16 * 1024;
/** While reading waits for the client to take its replies, the queue is looked at after this long,
 * doubling up to the most. */
const UNREAD_POLL_MS = 1;
const UNREAD_POLL_MAX_MS = 100;

export class TcpConnection {
  readonly socket: net.Socket;
  /** Queries handed to the pipeline and not answered yet. */
  inFlight = 0;
  /** performance.now() by which the next query must be whole, or Infinity while queries are in flight. */
  deadline: number;
  readonly #listener: { pipeline: Pipeline; opts: TcpOptions; log: Logger };
  readonly #peer: Peer;
  readonly #frames = new FrameReader();
  /** Set by a zero-length message or a close of the listener: read nothing more, answer what is in
   * flight, then let go of the connection. */
  #ending = false;
  /** The client sent its FIN: the queries it sent are answered, then the connection closes. */
  #peerEnded = false;
  /** Node holds replies past its high-water mark: reading waits for 'drain'. */
  #writeBlocked = false;
  /** More than MAX_UNREAD octets of replies wait for the client: reading waits for it to take them. */
  #unreadBlocked = false;
  #unreadTimer: NodeJS.Timeout | undefined;
  /** socket.bytesWritten when the kernel's queue was last looked at. */
  #probedAt = 0;
  /** This turn's budget spent: reading goes on in the next turn of the event loop. */
  #yielded = false;
  #turnLeft = TURN_QUERIES;
  #turnEnds = 0;
  /** A multi-message reply holds the lane: reading waits until it and what queued behind it are out. */
  #holding = false;
  readonly #lane: ReplyLane;
  /** Octets of replies the client had taken at the last check, and when that last moved while
   * replies were waiting. */
  #taken = 0;
  #takenAt = 0;
  readonly #onFrame = (msg: Buffer): boolean => this.#query(msg);

  constructor(socket: net.Socket, listener: { pipeline: Pipeline; opts: TcpOptions; log: Logger }) {
    this.socket = socket;
    this.#listener = listener;
    this.deadline = performance.now() + listener.opts.readMs;
    this.#peer = {
      proto: "tcp",
      // DNS over TLS: replies may be padded (RFC 7830 6: never over plain TCP).
      padded: (socket as { encrypted?: boolean }).encrypted === true,
      remoteAddress: socket.remoteAddress ?? "",
      remotePort: socket.remotePort ?? 0,
      localAddress: socket.localAddress ?? "",
      localPort: socket.localPort ?? 0,
    };
    this.#lane = new ReplyLane(socket, listener.opts.writeMs, (held) => {
      this.#holding = held;
      if (held) socket.pause();
      else this.#readOn();
    });
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      this.#newTurn();
      this.#frames.push(chunk, this.#onFrame);
    });
    socket.on("end", () => {
      this.#peerEnded = true;
      this.#readOn();
    });
    socket.on("drain", () => {
      this.#writeBlocked = false;
      this.#readOn();
    });
    socket.on("close", () => clearTimeout(this.#unreadTimer));
    socket.on("error", (err) => listener.log.debug({ err }, "tcp connection error"));
  }

  /** Nothing in flight: the listener may close it to make room for a new one. */
  get idle(): boolean {
    return this.inFlight === 0;
  }

  /** One whole message from the stream; false stops reading until #readOn. */
  #query(msg: Buffer): boolean {
    // A zero-length message is no DNS message: nothing after it can be trusted to be DNS either.
    if (msg.length === 0 || this.#ending) {
      this.end();
      return false;
    }
    const { pipeline, log } = this.#listener;
    // One object per query: it is also what names the query's place in the lane.
    const pad = this.#peer.padded === true && asksPadding(msg);
    const query: Peer = {
      ...this.#peer,
      write: (m) => this.#lane.stream(query, pad ? padded(m, RESPONSE_BLOCK) : m),
    };
    let out: Buffer | undefined | Promise<Buffer | undefined>;
    try {
      out = pipeline.handle(msg, query);
    } catch (err) {
      log.error({ err }, "query failed");
      out = undefined;
    }
    if (out instanceof Promise) {
      this.inFlight++;
      this.deadline = Infinity;
      out
        .then(
          (b) => this.#reply(query, b, pad),
          (err: unknown) => {
            this.#reply(query, undefined, false);
            log.error({ err }, "query failed");
          },
        )
        .finally(() => this.#settled());
    } else {
      this.#reply(query, out, pad);
      if (this.inFlight === 0) this.deadline = performance.now() + this.#listener.opts.idleMs;
    }
    if (--this.#turnLeft <= 0 || performance.now() >= this.#turnEnds) this.#yield();
    return this.#reading();
  }

  /** The last (or only) message of a query's reply, through the lane, padded when `pad`; past Node's
   * high-water mark of unsent replies reading waits for 'drain', past MAX_UNREAD in the kernel for the
   * client to read. */
  #reply(query: Peer, out: Buffer | undefined, pad: boolean): void {
    this.#lane.end(query, pad && out !== undefined ? padded(out, RESPONSE_BLOCK) : out);
    const s = this.socket;
    if (s.writableNeedDrain) this.#writeBlocked = true;
    else if (s.bytesWritten - this.#probedAt >= PROBE_EVERY) {
      this.#probedAt = s.bytesWritten;
      if (!this.#unreadBlocked && unread(s) > MAX_UNREAD) {
        this.#unreadBlocked = true;
        this.#pollUnread(UNREAD_POLL_MS);
      }
    }
  }

  /** Reads on once the client has taken at least half of what it left unread. */
  #pollUnread(ms: number): void {
    this.#unreadTimer = setTimeout(() => {
      if (this.socket.destroyed) return;
      if (unread(this.socket) > MAX_UNREAD / 2) {
        this.#pollUnread(Math.min(ms * 2, UNREAD_POLL_MAX_MS));
        return;
      }
      this.#unreadBlocked = false;
      this.#readOn();
    }, ms);
    this.#unreadTimer.unref();
  }

  #newTurn(): void {
    this.#turnLeft = TURN_QUERIES;
    this.#turnEnds = performance.now() + TURN_MS;
  }

  /** This turn's budget is spent: go on once the event loop has served the others. */
  #yield(): void {
    this.#yielded = true;
    setImmediate(() => {
      this.#yielded = false;
      this.#newTurn();
      this.#readOn();
    });
  }

  #settled(): void {
    this.inFlight--;
    if (this.inFlight === 0) {
      this.deadline = performance.now() + this.#listener.opts.idleMs;
      if (this.#ending) this.socket.destroySoon();
    }
    // Below maxInFlight again: read on (#readOn checks what else may hold it back).
    this.#readOn();
  }

  #mayRead(): boolean {
    return (
      !this.#ending &&
      !this.#writeBlocked &&
      !this.#unreadBlocked &&
      !this.#holding &&
      !this.#yielded &&
      this.inFlight < this.#listener.opts.maxInFlight
    );
  }

  /** Whether to go on reading; pauses the socket when not. */
  #reading(): boolean {
    if (this.#mayRead()) return true;
    this.socket.pause();
    return false;
  }

  /** Reads on once nothing holds it back: first what the frame reader kept, then the socket. After
   * the client's FIN, once every whole query it sent has been taken, the connection ends. */
  #readOn(): void {
    if (!this.#mayRead()) return;
    this.#frames.push(EMPTY, this.#onFrame);
    if (!this.#reading()) return;
    if (this.#peerEnded) this.end();
    else this.socket.resume();
  }

  /** Reads nothing more; the replies in flight are sent, then the connection is let go whole.
   * destroySoon, not end: end() alone half-closes it, and a client that keeps its own side open
   * would hold it (and a place under maxConnections) for good. */
  end(): void {
    this.#ending = true;
    this.socket.pause();
    if (this.inFlight === 0) this.socket.destroySoon();
  }

  /** Closes the connection if it is past a deadline: no whole query in time, or a reply the client
   * has not taken for `write`. Returns true when it closed it. */
  check(now: number): boolean {
    const s = this.socket;
    const waiting = unread(s);
    if (waiting > 0) {
      const taken = s.bytesWritten - waiting;
      if (taken !== this.#taken || this.#takenAt === 0) {
        this.#taken = taken;
        this.#takenAt = now;
      } else if (now - this.#takenAt >= this.#listener.opts.writeMs) {
        s.destroy();
        return true;
      }
    } else {
      this.#takenAt = 0;
    }
    if (now < this.deadline || this.#ending) return false;
    // Replies still to write go first; if they never do, the write deadline ends it.
    this.end();
    return true;
  }
}
