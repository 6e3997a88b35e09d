// A TCP client that keeps its own side open (allowHalfOpen), to check that the server lets go of a
// connection whole rather than only half-closing it. TCP shows no difference between the two at the
// server's FIN, so after it the client writes on: a connection the server dropped answers with a reset,
// which fails the second write (EPIPE) and closes the socket.

import net from "node:net";

export interface HalfOpenResult {
  /** Every octet the server sent. */
  received: Buffer;
  /** "dropped": the server let go of the connection whole; "half-open": it only sent its FIN;
   * "open": it did neither within the wait. */
  end: "dropped" | "half-open" | "open";
}

/** Connects to 127.0.0.1:port, writes `send` in pieces of `piece` octets, and waits `waitMs` at most. */
export function halfOpenExchange(
  port: number,
  o: { send?: Buffer; piece?: number; waitMs: number },
): Promise<HalfOpenResult> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let fin = false;
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("error", () => undefined);
    s.on("close", () => resolve({ received: Buffer.concat(chunks), end: "dropped" }));
    s.on("end", () => {
      fin = true;
      setTimeout(() => s.write(Buffer.from([0, 12])), 50);
      setTimeout(() => s.write(Buffer.alloc(12)), 150);
    });
    const send = o.send ?? Buffer.alloc(0);
    const piece = o.piece ?? Math.max(1, send.length);
    for (let at = 0; at < send.length; at += piece) s.write(send.subarray(at, at + piece));
    setTimeout(() => {
      s.removeAllListeners("close");
      s.destroy();
      resolve({ received: Buffer.concat(chunks), end: fin ? "half-open" : "open" });
    }, o.waitMs);
  });
}
