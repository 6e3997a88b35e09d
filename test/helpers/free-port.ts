// A TCP port on 127.0.0.1 that was free a moment ago, for listeners a test must know in advance
// (health, ready, prometheus).

import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
