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

/** Cuts the messages out of a TCP byte stream, however the stream splits them into chunks. */
export class FrameReader {
  #pending: Buffer = Buffer.alloc(0);

  /** Calls `onFrame` for every whole message in the stream so far, in order; a message's length
   * prefix of 0 gives an empty frame. Stops early when `onFrame` returns false (the caller closed). */
  push(chunk: Buffer, onFrame: (frame: Buffer) => boolean | void): void {
    let buf = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    while (buf.length >= 2) {
      const len = (buf[0] << 8) | buf[1];
      if (buf.length < 2 + len) break;
      const frame = buf.subarray(2, 2 + len);
      buf = buf.subarray(2 + len);
      if (onFrame(frame) === false) {
        this.#pending = Buffer.alloc(0);
        return;
      }
    }
    // Keep only the unread tail, not the whole chunk it came from.
    this.#pending = buf.length > 0 && buf.byteOffset !== 0 ? Buffer.from(buf) : buf;
  }

  /** Octets of a message that has not fully arrived yet. */
  get buffered(): number {
    return this.#pending.length;
  }
}
