// The toy server of bench/alloc-check.ts: a UDP echo (each query sent back with QR set) that also
// allocates ARRAYS arrays of 125 elements per query and keeps the last KEPT alive (16 by default: the
// optimizer cannot drop them, and they die young; 100,000: they live long enough to be promoted, and
// the old generation's full collections run under the load, as in a server with a big cache). At
// start it measures, in-process, what one such array costs on the JS heap (the growth of heapUsed
// over bursts too short for a collection), and prints it on its ready line.
//   node bench/alloc-toy.ts PORT ARRAYS [KEPT]      (PORT 0: any free port)

import dgram from "node:dgram";
import { literalLookup } from "../src/server/udp.ts";

const port = Number(process.argv[2] ?? 0);
const arrays = Number(process.argv[3] ?? 0);
const kept = Number(process.argv[4] ?? 16);
const ring: unknown[] = new Array(kept);
let n = 0;

function allocate(k: number): void {
  for (let i = 0; i < k; i++) {
    ring[n] = new Array(125);
    n = n + 1 === kept ? 0 : n + 1;
  }
}

/** Bytes per array: the median growth of heapUsed over bursts of 400 (a burst that spans a collection
 * shrinks the heap instead, and falls out of the median's half). */
function bytesPerArray(): number {
  for (let i = 0; i < 200; i++) allocate(1000); // optimized, as under load
  const per: number[] = [];
  for (let i = 0; i < 21; i++) {
    const before = process.memoryUsage().heapUsed;
    allocate(400);
    per.push((process.memoryUsage().heapUsed - before) / 400);
  }
  const grown = per.filter((x) => x > 0).sort((a, b) => a - b);
  return grown[Math.floor(grown.length / 2)];
}

const perArray = bytesPerArray();
const sock = dgram.createSocket({ type: "udp4", lookup: literalLookup });
sock.on("message", (msg, rinfo) => {
  allocate(arrays);
  msg[2] |= 0x80;
  sock.send(msg, rinfo.port, rinfo.address);
});
sock.bind(port, "127.0.0.1", () =>
  process.stdout.write(`toy listening on ${sock.address().port}, ${perArray.toFixed(1)} bytes per array\n`),
);
process.on("SIGTERM", () => sock.close(() => process.exit(0)));
