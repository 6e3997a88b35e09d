// One raw UDP exchange with a server on loopback: for packets dig cannot send.

import dgram from "node:dgram";

/** Sends `query` to `host`:`port` (from `from`, another loopback address for a second client); the
 * first datagram back, or undefined after `timeoutMs`. */
export function exchangeUdp(
  port: number,
  query: Buffer,
  timeoutMs = 1000,
  host = "127.0.0.1",
  from?: string,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
    const timer = setTimeout(() => {
      sock.close();
      resolve(undefined);
    }, timeoutMs);
    sock.on("message", (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    sock.bind(0, from, () => sock.send(query, port, host));
  });
}
