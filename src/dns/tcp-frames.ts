// DNS over TCP frames every message with a 2-octet length before it (RFC 1035 4.2.2, RFC 7766 8).
// One writer and one reader for the three kinds of connection: the server's, forward's to an
// upstream, and the resolver model's.

/** The message with its length prefix, ready for socket.write. */
export function tcpFrame(msg: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(2 + msg.length);
  frame[0] = msg.length >> 8;
  frame[1] = msg.length & 0xff;
  frame.set(msg, 2);
  return frame;
}

const EMPTY = Buffer.alloc(0);

/** Cuts the messages out of a TCP byte stream, however the stream splits them into chunks. */
export class FrameReader {
  /** A message that has not fully arrived: a buffer of its whole length once the prefix is known, so
   * each octet is copied once however small the pieces it comes in (a peer sending one octet at a
   * time would otherwise cost a copy of everything so far per octet). */
  #partial: Buffer | undefined = undefined;
  #filled = 0;
  /** The first octet of a length prefix whose second has not arrived, or -1. */
  #half = -1;
  /** Octets not looked at yet because the last onFrame asked to stop: read on the next push. */
  #held: Buffer = EMPTY;

  /** Calls `onFrame` for every whole message in the stream so far, in order; a message's length
   * prefix of 0 gives an empty frame. When `onFrame` returns false it is not called again in this push:
   * the octets after that message stay here, and the next push (an empty chunk will do) goes on from
   * them. A frame handed to `onFrame` may share memory with `chunk`. */
  push(chunk: Buffer, onFrame: (frame: Buffer) => boolean | void): void {
    let buf = chunk;
    /** Whether buf is this reader's own copy: what is left of it can be held without another. */
    let own = false;
    if (this.#held.length > 0) {
      buf = chunk.length === 0 ? this.#held : Buffer.concat([this.#held, chunk]);
      own = true;
      this.#held = EMPTY;
    }
    let p = 0;
    if (this.#half >= 0 && buf.length > 0) {
      this.#start(((this.#half << 8) | buf[0]) + 2);
      this.#partial![0] = this.#half;
      this.#partial![1] = buf[0];
      this.#filled = 2;
      this.#half = -1;
      p = 1;
    }
    const partial = this.#partial;
    if (partial !== undefined) {
      const n = Math.min(partial.length - this.#filled, buf.length - p);
      buf.copy(partial, this.#filled, p, p + n);
      this.#filled += n;
      p += n;
      if (this.#filled < partial.length) return;
      this.#partial = undefined;
      if (onFrame(partial.subarray(2)) === false) {
        this.#hold(buf, p, own);
        return;
      }
    }
    while (buf.length - p >= 2) {
      const len = (buf[p] << 8) | buf[p + 1];
      if (buf.length - p - 2 < len) {
        this.#start(len + 2);
        buf.copy(this.#partial!, 0, p);
        this.#filled = buf.length - p;
        return;
      }
      const frame = buf.subarray(p + 2, p + 2 + len);
      p += 2 + len;
      if (onFrame(frame) === false) {
        this.#hold(buf, p, own);
        return;
      }
    }
    if (buf.length - p === 1) this.#half = buf[p];
  }

  #start(size: number): void {
    this.#partial = Buffer.allocUnsafe(size);
    this.#filled = 0;
  }

  /** Keeps buf[p..] for the next push: copied out of a chunk the caller may reuse, or, when buf is
   * already its own copy, as it is (a reader stopped every few messages copies its backlog once). */
  #hold(buf: Buffer, p: number, own: boolean): void {
    if (p < buf.length) this.#held = own ? buf.subarray(p) : Buffer.from(buf.subarray(p));
  }

  /** Octets received and not handed out yet: of a message that has not fully arrived, or held. */
  get buffered(): number {
    return this.#held.length + (this.#partial === undefined ? (this.#half >= 0 ? 1 : 0) : this.#filled);
  }

  /** True while a message has begun to arrive and is not whole yet. */
  get midMessage(): boolean {
    return this.#partial !== undefined || this.#half >= 0;
  }
}
