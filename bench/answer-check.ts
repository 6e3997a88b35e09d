// Before any load: the same queries to two servers must get the same rcode and the same records (order
// and TTL aside). A benchmark of a server that answers wrongly measures nothing.

import dgram from "node:dgram";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { newQuery, type Msg } from "../src/dns/message.ts";
import { typeFromName } from "../src/dns/constants.ts";
import { rdataToText } from "../src/dns/text.ts";

function ask(port: number, name: string, type: number, edns: boolean): Promise<Msg> {
  const sock = dgram.createSocket("udp4");
  const id = Math.floor(Math.random() * 65536);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no answer from port ${port} for ${name}`));
    }, 2000);
    sock.on("message", (buf) => {
      const m = decode(buf);
      if (m.id !== id) return;
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    const q = newQuery(name.endsWith(".") ? name : `${name}.`, type, 1, id);
    if (edns) q.edns = { udpSize: 1232, version: 0, do: false, options: [] };
    sock.send(encode(q), port, "127.0.0.1");
  });
}

const summary = (m: Msg) =>
  [`rcode ${m.rcode}`, ...m.answer.map((rr) => `${rr.name} ${rr.type} ${rdataToText(rr.data)}`).sort()].join(
    "\n",
  );

/** Asks both servers every query line ("NAME TYPE"), with EDNS (1232 octets) or without, as dnsperf
 * asks; returns the differences, at most `max`. */
export async function compareAnswers(
  lines: string[],
  a: number,
  b: number,
  o: { edns?: boolean; max?: number } = {},
): Promise<string[]> {
  const edns = o.edns ?? true;
  const max = o.max ?? 10;
  const diffs: string[] = [];
  for (const line of lines) {
    const [name, typeText] = line.split(" ");
    const type = typeFromName(typeText)!;
    const [x, y] = await Promise.all([ask(a, name, type, edns), ask(b, name, type, edns)]);
    if (summary(x) !== summary(y))
      diffs.push(
        `${line}:\n  ${summary(x).replaceAll("\n", "\n  ")}\nvs\n  ${summary(y).replaceAll("\n", "\n  ")}`,
      );
    if (diffs.length >= max) break;
  }
  return diffs;
}
