// The floor: a bare Node UDP server that sends each query back with QR set. No DNS work at all, so its
// QPS is what Node's own I/O allows on this machine. It sends the way clusterdns does, with its
// literalLookup (the reply's address is a literal, so no dns.lookup tick), else the floor would be lower
// than Node's.
//   node bench/echo-server.ts PORT      (PORT 0: any free port; the ready line names it)

import dgram from "node:dgram";
import { literalLookup } from "../src/server/udp.ts";

const port = Number(process.argv[2] ?? 5300);
const sock = dgram.createSocket({ type: "udp4", lookup: literalLookup });
sock.on("message", (msg, rinfo) => {
  msg[2] |= 0x80;
  sock.send(msg, rinfo.port, rinfo.address);
});
sock.bind(port, "127.0.0.1", () => process.stdout.write(`echo listening on ${sock.address().port}\n`));
process.on("SIGTERM", () => sock.close(() => process.exit(0)));
