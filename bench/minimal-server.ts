// An anchor: the least a DNS server on Node's dgram can do per query. Answers are precomputed (the
// reference server's replies to every query of the mix, bench/precompute.ts); per query it reads the
// question, lowercases the name into a key, looks the key up in a Map, copies the stored reply, patches
// the ID and echoes the client's question. No EDNS, no metrics, no validation past the question: its
// QPS is Node's ceiling for a DNS server, and clusterdns's target is 0.9x of it.
// With WORKERS > 1 it answers as clusterdns's -workers does: the main thread and WORKERS - 1 worker
// threads, each with its own answers and its own UDP socket in one SO_REUSEPORT group.
//   node bench/minimal-server.ts PORT ANSWERS-FILE [WORKERS]   (PORT 0: any free port; the ready line names it)

import dgram from "node:dgram";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { literalLookup } from "../src/server/udp.ts";
import { readAnswers } from "./answers-file.ts";

const scratch = Buffer.allocUnsafe(260);
const { port, file, workers } = (
  isMainThread
    ? { port: Number(process.argv[2]), file: process.argv[3], workers: Number(process.argv[4] ?? 1) }
    : workerData
) as { port: number; file: string; workers: number };
const answers = new Map<string, Buffer>();
for (const reply of readAnswers(readFileSync(file))) {
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

const sock = dgram.createSocket({ type: "udp4", lookup: literalLookup, reusePort: workers > 1 });
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
sock.bind(port, "127.0.0.1", () => {
  if (!isMainThread) {
    parentPort!.postMessage("listening");
    return;
  }
  // The main thread bound the port (0: any); the workers join it there.
  const bound = sock.address().port;
  const threads = Array.from(
    { length: workers - 1 },
    () => new Worker(new URL(import.meta.url), { workerData: { port: bound, file, workers } }),
  );
  let listening = 0;
  const ready = () =>
    process.stdout.write(`minimal listening on ${bound}, ${answers.size} answers, ${workers} thread(s)\n`);
  for (const t of threads) t.once("message", () => ++listening === threads.length && ready());
  if (threads.length === 0) ready();
});
if (isMainThread) process.on("SIGTERM", () => process.exit(0));
