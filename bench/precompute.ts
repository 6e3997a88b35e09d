// Asks a server every distinct query of the mix, as dnsperf asks it (no EDNS), and keeps the replies:
// what the anchor servers replay. Pipelined, a window of queries outstanding, each asked again on loss.

import dgram from "node:dgram";
import { encode } from "../src/dns/encode.ts";
import { newQuery } from "../src/dns/message.ts";
import { typeFromName } from "../src/dns/constants.ts";

const WINDOW = 200;
const TIMEOUT_MS = 2000;
const TRIES = 3;

export async function precomputeAnswers(port: number, lines: string[]): Promise<Buffer[]> {
  const distinct = [...new Set(lines.map((l) => l.toLowerCase()))];
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((done) => sock.bind(0, "127.0.0.1", done));
  const replies: (Buffer | undefined)[] = new Array(distinct.length);
  const waiting = new Map<number, (b: Buffer) => void>();
  sock.on("message", (b) => waiting.get(b.readUInt16BE(0))?.(b));
  const ask = (i: number, id: number) =>
    new Promise<Buffer | undefined>((resolve) => {
      const [name, type] = distinct[i].split(" ");
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(undefined);
      }, TIMEOUT_MS);
      waiting.set(id, (b) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(b);
      });
      const q = newQuery(name.endsWith(".") ? name : `${name}.`, typeFromName(type)!, 1, id);
      sock.send(encode(q), port, "127.0.0.1");
    });
  let next = 0;
  const worker = async (slot: number) => {
    for (let i = next++; i < distinct.length; i = next++) {
      for (let t = 0; t < TRIES && replies[i] === undefined; t++) replies[i] = await ask(i, slot);
      if (replies[i] === undefined) throw new Error(`no answer from port ${port} for ${distinct[i]}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: WINDOW }, (_, slot) => worker(slot)));
  } finally {
    sock.close();
  }
  return replies as Buffer[];
}
