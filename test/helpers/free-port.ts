// Ports on 127.0.0.1 for listeners a test must know in advance: a TCP port that was free a moment ago
// (health, ready, prometheus), and a port bound for both UDP and TCP (a DNS server's, or one a test
// holds to see a server fail to bind it).

import dgram from "node:dgram";
import net from "node:net";

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

export interface HeldPort {
  port: number;
  /** Closes both sockets. */
  release(): Promise<void>;
}

/** A port bound on 127.0.0.1 for both UDP and TCP. The UDP port comes from the kernel; its TCP twin may
 * be another socket's, so then another port is tried, and nothing of a failed try is left open. */
export async function holdUdpTcpPort(): Promise<HeldPort> {
  for (let i = 0; i < 20; i++) {
    const udp = dgram.createSocket("udp4");
    await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
    const { port } = udp.address();
    const tcp = net.createServer();
    const ok = await new Promise<boolean>((r) => {
      tcp.once("error", () => r(false));
      tcp.listen(port, "127.0.0.1", () => r(true));
    });
    const release = async () => {
      await new Promise<void>((r) => udp.close(() => r()));
      if (ok) await new Promise((r) => tcp.close(r));
    };
    if (ok) return { port, release };
    await release();
  }
  throw new Error("no port free for both UDP and TCP");
}

/** A port free for both UDP and TCP on 127.0.0.1 a moment ago. */
export async function freeUdpTcpPort(): Promise<number> {
  const held = await holdUdpTcpPort();
  await held.release();
  return held.port;
}
