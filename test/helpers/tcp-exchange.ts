// One DNS exchange over TCP with a server on loopback: the query with its two-octet length prefix
// (RFC 1035 4.2.2), and the first whole message back.

import net from "node:net";

/** Sends `query` to 127.0.0.1:`port` over TCP (from `localAddress`, another loopback address for a
 * second client); the reply, or undefined after `timeoutMs`. */
export function exchangeTcp(
  port: number,
  query: Buffer,
  timeoutMs = 5000,
  localAddress?: string,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: "127.0.0.1", localAddress });
    let buf = Buffer.alloc(0);
    const done = (reply: Buffer | undefined) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on("connect", () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(query.length);
      sock.write(Buffer.concat([len, query]));
    });
    sock.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0))
        done(buf.subarray(2, 2 + buf.readUInt16BE(0)));
    });
    sock.on("error", () => done(undefined));
    sock.on("close", () => done(undefined));
  });
}
