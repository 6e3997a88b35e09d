// The floor: a bare Node UDP server that sends each query back with QR set. No DNS work at all, so its
// QPS is what Node's own I/O allows on this machine. It sends the way clusterdns does (src/server/udp.ts:
// the reply's address is a literal, so no dns.lookup tick), else the floor would be lower than Node's.
//   node bench/echo-server.ts PORT

import dgram from "node:dgram";

const port = Number(process.argv[2] ?? 5300);
const sock = dgram.createSocket({ type: "udp4", lookup: (address, _family, done) => done(null, address, 4) });
sock.on("message", (msg, rinfo) => {
  msg[2] |= 0x80;
  sock.send(msg, rinfo.port, rinfo.address);
});
sock.bind(port, "127.0.0.1", () => process.stdout.write(`echo listening on ${port}\n`));
process.on("SIGTERM", () => sock.close(() => process.exit(0)));
