// The floor: a bare Node UDP server that sends each query back with QR set. No DNS work at all, so its
// QPS is what Node's own I/O allows on this machine. It sends the way clusterdns does, with its
// literalLookup (the reply's address is a literal, so no dns.lookup tick), else the floor would be lower
// than Node's. With `batched`, it reads and sends through clusterdns's batched engine (native/udp.c,
// BatchedListener) instead of dgram: the engine's own floor, what every clusterdns answer pays before
// any DNS decision.
//   node bench/echo-server.ts PORT [batched]   (PORT 0: any free port; the ready line names it)

import dgram from "node:dgram";
import { pino } from "pino";
import { literalLookup } from "../src/server/udp.ts";
import { BatchedListener, loadAddon } from "../src/server/udp-batched.ts";
import type { Pipeline } from "../src/server/pipeline.ts";

const port = Number(process.argv[2] ?? 5300);
const ready = (p: number) => process.stdout.write(`echo listening on ${p}\n`);

if (process.argv[3] === "batched") {
  const addon = loadAddon();
  if (addon instanceof Error) throw addon;
  // Only the part of a pipeline the engine calls: the query copied into the send buffer, QR set.
  const echo = {
    handleInto(query: Buffer, length: number, _peer: unknown, out: Buffer, at: number): number {
      query.copy(out, at, 0, length);
      out[at + 2] |= 0x80;
      return length;
    },
  } as unknown as Pipeline;
  const listener = new BatchedListener(
    addon,
    echo,
    { address: "127.0.0.1", port, reusePort: false },
    pino({ level: "warn" }),
  );
  listener.bind("127.0.0.1", port).then(ready, (err: unknown) => {
    throw err;
  });
  process.on("SIGTERM", () => process.exit(0));
} else {
  const sock = dgram.createSocket({ type: "udp4", lookup: literalLookup });
  sock.on("message", (msg, rinfo) => {
    msg[2] |= 0x80;
    sock.send(msg, rinfo.port, rinfo.address);
  });
  sock.bind(port, "127.0.0.1", () => ready(sock.address().port));
  process.on("SIGTERM", () => sock.close(() => process.exit(0)));
}
