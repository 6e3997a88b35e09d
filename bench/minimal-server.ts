// An anchor: the least a DNS server on Node's dgram can do per query. Answers are precomputed (the
// reference server's replies to every query of the mix, bench/precompute.ts); per query it reads the
// question, lowercases the name into a key, looks the key up in a Map, copies the stored reply, patches
// the ID and echoes the client's question. No EDNS, no metrics, no validation past the question: its
// QPS is Node's ceiling for a DNS server, and clusterdns's target is 0.9x of it.
//   node bench/minimal-server.ts PORT ANSWERS-FILE      (PORT 0: any free port; the ready line names it)

import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { literalLookup } from "../src/server/udp.ts";
import { readAnswers } from "./answers-file.ts";

const scratch = Buffer.allocUnsafe(260);
const port = Number(process.argv[2]);
const answers = new Map<string, Buffer>();
for (const reply of readAnswers(readFileSync(process.argv[3]))) {
  const key = questionKey(reply);
  if (key !== undefined) answers.set(key, reply);
}

/** The question's name lowercased, with its type and class, as a latin1 string; undefined if it does
 * not parse. */
function questionKey(b: Buffer): string | undefined {
  let p = 12;
  let n = 0;
  for (let l = b[p]; l !== 0; l = b[p]) {
    if (l > 63 || p + l + 1 >= b.length || n + l + 1 > 255) return undefined;
    scratch[n++] = l;
    for (let i = p + 1; i <= p + l; i++) {
      const c = b[i];
      scratch[n++] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
    }
    p += l + 1;
  }
  if (p + 5 > b.length) return undefined;
  for (let i = p; i < p + 5; i++) scratch[n++] = b[i];
  return scratch.toString("latin1", 0, n);
}

const sock = dgram.createSocket({ type: "udp4", lookup: literalLookup });
sock.on("message", (msg, rinfo) => {
  if (msg.length < 17) return;
  const key = questionKey(msg);
  const stored = key === undefined ? undefined : answers.get(key);
  if (stored === undefined) return;
  const out = Buffer.allocUnsafe(stored.length);
  out.set(stored);
  out[0] = msg[0];
  out[1] = msg[1];
  // The client's spelling of the question (its length is the stored one's: the key matched).
  for (let i = 12, end = 12 + key!.length - 4; i < end; i++) out[i] = msg[i];
  sock.send(out, rinfo.port, rinfo.address);
});
sock.bind(port, "127.0.0.1", () =>
  process.stdout.write(`minimal listening on ${sock.address().port}, ${answers.size} answers\n`),
);
process.on("SIGTERM", () => sock.close(() => process.exit(0)));
