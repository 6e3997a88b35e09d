// A TCP relay on 127.0.0.1 to a server's port that can go silent: while `silent`, the bytes either way
// are dropped and no connection is closed, as when the far end of a connection vanished without a
// word (its node gone, a NAT's state lost). It counts the connections clients opened and closed.

import net from "node:net";

export interface SilentRelay {
  port: number;
  silent: boolean;
  opened: number;
  /** Connections whose client closed them. */
  closedByClient: number;
  close(): Promise<void>;
}

export async function startSilentRelay(to: number): Promise<SilentRelay> {
  const sockets = new Set<net.Socket>();
  const relay: SilentRelay = {
    port: 0,
    silent: false,
    opened: 0,
    closedByClient: 0,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server = net.createServer((client) => {
    relay.opened++;
    const upstream = net.connect({ host: "127.0.0.1", port: to });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
    }
    client.on("data", (d: Buffer) => relay.silent || upstream.write(d));
    upstream.on("data", (d: Buffer) => relay.silent || client.write(d));
    client.on("close", () => {
      relay.closedByClient++;
      upstream.destroy();
    });
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  relay.port = (server.address() as net.AddressInfo).port;
  return relay;
}
