// A Frame Streams writer (the transport dnstap receivers read: fstrm, golang-dnstap) over a unix socket,
// TCP or TLS, bidirectional as the receivers expect on a socket: the writer sends READY with the content
// type, the receiver answers ACCEPT, the writer sends START, then data frames (a 4-octet big-endian
// length and the payload); at the end STOP, answered by FINISH. A control frame is an escape (a zero
// length), its own length, its type, and fields (CONTENT_TYPE: type 1, length, the text).
//
// The query path never waits for it: frames are written into a chunk of octets (reserve/commit), and
// handed to the socket every FLUSH_MS. Frames wait while the receiver connects or
// reads slowly, up to a bound of frames and of octets; past it they are dropped and counted, and a line
// says so at most once a minute. A receiver that goes away, or takes nothing for 4 s, is connected to
// again, with backoff from 0.5 s up to 30 s; nothing it does throws into the server.

import { connect as netConnect, isIP, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { Logger } from "pino";

export const CONTENT_TYPE = "protobuf:dnstap.Dnstap";

const ACCEPT = 1;
const START = 2;
const STOP = 3;
const READY = 4;
const FINISH = 5;
const FIELD_CONTENT_TYPE = 1;
/** Longest control frame a receiver may send (fstrm's limit). */
const MAX_CONTROL = 512;

const CHUNK = 64 * 1024;
/** Messages are handed to the socket this long after the first of them is written: one system call
 * for all the queries of that time, instead of one per turn of the event loop. */
const FLUSH_MS = 20;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const HANDSHAKE_MS = 5_000;
/** A receiver that takes none of the octets waiting for it this long is let go and connected to again
 * (CoreDNS's write timeout): it hangs, or is gone without a word, and a new one may be listening. */
const WRITE_TIMEOUT_MS = 4_000;
const FINISH_WAIT_MS = 1_000;
const DROP_LOG_MS = 60_000;

/** Where the receiver listens. */
export type Endpoint =
  { kind: "unix"; path: string } | { kind: "tcp" | "tls"; host: string; port: number; skipVerify: boolean };

export interface FrameStreamOptions {
  endpoint: Endpoint;
  /** Frames waiting for the socket, at most (CoreDNS's queue: 10,000 messages). */
  maxFrames: number;
  /** Octets of frames waiting for the socket, at most. */
  maxOctets: number;
  /** Octets handed to the socket and not yet sent, at most (CoreDNS's write buffer). */
  socketOctets: number;
  log: Logger;
}

/** Counters a writer keeps: frames handed to the socket, and dropped. */
export interface FrameStats {
  sent: number;
  dropped: number;
}

/** The text of an endpoint for logs. */
export function endpointText(e: Endpoint): string {
  return e.kind === "unix"
    ? `unix://${e.path}`
    : `${e.kind}://${e.host.includes(":") ? `[${e.host}]` : e.host}:${e.port}`;
}

export class FrameStream {
  readonly stats: FrameStats = { sent: 0, dropped: 0 };
  readonly #o: FrameStreamOptions;
  /** Filled chunks not yet written, with their frame counts; the last one is being filled. */
  #chunks: Buffer[] = [];
  #chunkFrames: number[] = [];
  #chunk: Buffer = Buffer.allocUnsafe(CHUNK);
  #used = 0;
  /** Where the octets of #chunk not yet in #chunks begin. */
  #from = 0;
  #frames = 0;
  /** Octets in #chunks and #chunk not yet handed to the socket. */
  #octets = 0;
  #socket: Socket | undefined;
  #ready = false;
  #closed = false;
  #flushQueued = false;
  readonly #flushNow = () => this.#flush();
  #backoff = BACKOFF_MIN_MS;
  #timer: NodeJS.Timeout | undefined;
  #droppedSince = 0;
  #dropLoggedAt = -Infinity;
  #connectedOnce = false;
  /** Where the frame being written starts in #chunk (after its length). */
  #frameAt = 0;
  /** Frames in #chunk after #from: handing them over gives them back. */
  #fillingFrames = 0;

  constructor(o: FrameStreamOptions) {
    this.#o = o;
  }

  get endpoint(): Endpoint {
    return this.#o.endpoint;
  }

  get connected(): boolean {
    return this.#ready;
  }

  /** Starts connecting (again after each loss) until close(). */
  start(): void {
    this.#connect();
  }

  /**
   * Room for one frame of `n` octets: the buffer to write the payload into, at `frameAt`; commit()
   * once written. Undefined when the frame is dropped (the queue is full, or the writer closed).
   */
  reserve(n: number): Buffer | undefined {
    if (this.#closed || this.#frames >= this.#o.maxFrames || this.#octets + n + 4 > this.#o.maxOctets) {
      this.#drop();
      return undefined;
    }
    if (this.#used + n + 4 > this.#chunk.length) {
      this.#seal(true);
      if (n + 4 > this.#chunk.length) this.#chunk = Buffer.allocUnsafe(n + 4);
    }
    this.#chunk.writeUInt32BE(n, this.#used);
    this.#frameAt = this.#used + 4;
    return this.#chunk;
  }

  /** Where reserve()'s frame starts in its buffer. */
  get frameAt(): number {
    return this.#frameAt;
  }

  /** The frame reserve() made room for is written, ending at `end`. */
  commit(end: number): void {
    this.#octets += end - this.#used;
    this.#used = end;
    this.#frames++;
    this.#fillingFrames++;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      setTimeout(this.#flushNow, FLUSH_MS).unref();
    }
  }

  /** Sends what is queued, then STOP, waits a moment for FINISH, and closes for good. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    const s = this.#socket;
    if (s === undefined) return;
    if (this.#ready) {
      this.#flush();
      const finished = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FINISH_WAIT_MS);
        timer.unref();
        s.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
        s.on("data", (d: Buffer) => {
          if (controlType(d) === FINISH) s.end();
        });
      });
      s.write(control(STOP, false));
      await finished;
    }
    s.destroy();
  }

  /** Moves the unwritten part of the chunk being filled to the written-next list; with `fresh`, goes
   * on in a new chunk (the socket may still hold the old one's octets). */
  #seal(fresh: boolean): void {
    if (this.#used > this.#from) {
      this.#chunks.push(this.#chunk.subarray(this.#from, this.#used));
      this.#chunkFrames.push(this.#fillingFrames);
      this.#fillingFrames = 0;
    }
    this.#from = this.#used;
    if (!fresh) return;
    this.#chunk = Buffer.allocUnsafe(CHUNK);
    this.#used = 0;
    this.#from = 0;
  }

  #drop(): void {
    this.stats.dropped++;
    this.#droppedSince++;
    const now = performance.now();
    if (now - this.#dropLoggedAt < DROP_LOG_MS) return;
    this.#dropLoggedAt = now;
    this.#o.log.warn(
      { endpoint: endpointText(this.#o.endpoint), dropped: this.#droppedSince, connected: this.#ready },
      "dnstap messages dropped: the receiver is absent or slower than the queries " +
        "(clusterdns_dnstap_dropped_total); at most one such line a minute",
    );
    this.#droppedSince = 0;
  }

  /** Hands the queued chunks to the socket while it takes them (its buffer under the bound). */
  #flush(): void {
    this.#flushQueued = false;
    const s = this.#socket;
    if (!this.#ready || s === undefined) return;
    // The chunk being filled goes on being filled after what is handed over now: a new chunk only
    // every CHUNK octets, not every turn.
    this.#seal(false);
    while (this.#chunks.length > 0 && s.writableLength < this.#o.socketOctets) {
      const c = this.#chunks.shift()!;
      const n = this.#chunkFrames.shift()!;
      this.#octets -= c.length;
      this.#frames -= n;
      this.stats.sent += n;
      s.write(c);
    }
  }

  #connect(): void {
    if (this.#closed) return;
    const e = this.#o.endpoint;
    const s =
      e.kind === "unix"
        ? netConnect(e.path)
        : e.kind === "tcp"
          ? netConnect(e.port, e.host)
          : tlsConnect({
              host: e.host,
              port: e.port,
              // SNI carries names only (RFC 6066 3); an address is checked against the certificate's.
              servername: isIP(e.host) === 0 ? e.host : undefined,
              rejectUnauthorized: !e.skipVerify,
            });
    this.#socket = s;
    s.setNoDelay?.(true);
    const handshake = setTimeout(
      () => s.destroy(new Error("no ACCEPT from the receiver in time")),
      HANDSHAKE_MS,
    );
    let got = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length < 8) return;
      const len = got.readUInt32BE(4);
      if (got.readUInt32BE(0) !== 0 || len > MAX_CONTROL) {
        s.destroy(new Error("the receiver did not answer READY with a control frame"));
        return;
      }
      if (got.length < 8 + len) return;
      clearTimeout(handshake);
      s.off("data", onData);
      if (controlType(got) !== ACCEPT || !acceptsDnstap(got.subarray(8, 8 + len))) {
        s.destroy(new Error(`the receiver does not accept ${CONTENT_TYPE}`));
        return;
      }
      s.write(control(START, true));
      this.#ready = true;
      this.#backoff = BACKOFF_MIN_MS;
      this.#o.log.info({ endpoint: endpointText(e) }, "dnstap: connected to the receiver");
      this.#connectedOnce = true;
      // After the handshake the receiver only ever sends FINISH, which close() waits for.
      s.on("drain", () => this.#flush());
      // Node's socket timeout counts from the last write handed over or finished (or a read); once it
      // has fired, later writes do not arm it again, so an idle connection's is set again here.
      const stalled = () => {
        if (s.writableLength === 0) s.setTimeout(WRITE_TIMEOUT_MS, stalled);
        else s.destroy(new Error(`the receiver took nothing for ${WRITE_TIMEOUT_MS} ms`));
      };
      s.setTimeout(WRITE_TIMEOUT_MS, stalled);
      this.#flush();
    };
    s.on(e.kind === "tls" ? "secureConnect" : "connect", () => s.write(control(READY, true)));
    s.on("data", onData);
    s.on("error", (err) => this.#lost(s, err));
    s.on("close", () => {
      clearTimeout(handshake);
      this.#lost(s, undefined);
    });
  }

  /** The connection `s` ended: connect again after the backoff (unless closing). */
  #lost(s: Socket, err: Error | undefined): void {
    if (this.#socket !== s) return;
    this.#socket = undefined;
    const was = this.#ready;
    this.#ready = false;
    s.destroy();
    if (this.#closed) return;
    const fields = { endpoint: endpointText(this.#o.endpoint), retryMs: this.#backoff, err: err?.message };
    if (was) this.#o.log.warn(fields, "dnstap: lost the receiver; connecting again");
    else if (!this.#connectedOnce || this.#backoff >= BACKOFF_MAX_MS)
      this.#o.log.warn(fields, "dnstap: cannot reach the receiver; trying again");
    this.#timer = setTimeout(() => this.#connect(), this.#backoff);
    this.#timer.unref();
    this.#backoff = Math.min(this.#backoff * 2, BACKOFF_MAX_MS);
  }
}

/** A control frame of `type`, with the content type when `withType`. */
function control(type: number, withType: boolean): Buffer {
  const ct = Buffer.from(CONTENT_TYPE);
  const len = 4 + (withType ? 8 + ct.length : 0);
  const b = Buffer.alloc(8 + len);
  b.writeUInt32BE(len, 4);
  b.writeUInt32BE(type, 8);
  if (withType) {
    b.writeUInt32BE(FIELD_CONTENT_TYPE, 12);
    b.writeUInt32BE(ct.length, 16);
    ct.copy(b, 20);
  }
  return b;
}

/** The type of the control frame at the start of `b`, or 0. */
function controlType(b: Buffer): number {
  return b.length >= 12 && b.readUInt32BE(0) === 0 ? b.readUInt32BE(8) : 0;
}

/** Whether an ACCEPT's fields (`body`: type, then fields) name dnstap's content type, or none. */
function acceptsDnstap(body: Buffer): boolean {
  let at = 4;
  let any = false;
  while (at + 8 <= body.length) {
    const field = body.readUInt32BE(at);
    const len = body.readUInt32BE(at + 4);
    const text = body.toString("latin1", at + 8, at + 8 + len);
    at += 8 + len;
    if (field !== FIELD_CONTENT_TYPE) continue;
    any = true;
    if (text === CONTENT_TYPE) return true;
  }
  return !any;
}
