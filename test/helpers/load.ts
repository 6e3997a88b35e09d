// A steady, bounded query load over UDP for tests that change a running server (reload, lameduck):
// one query every `intervalMs`, each waited for up to `timeoutMs`. A query counts as failed when it
// times out or its rcode is not in `okRcodes`. The load stops by itself after `maxQueries`.

import dgram from "node:dgram";
import { encode } from "../../src/dns/encode.ts";
import { decode } from "../../src/dns/decode.ts";
import { newQuery, type Msg } from "../../src/dns/message.ts";

export interface LoadOptions {
  intervalMs?: number;
  timeoutMs?: number;
  maxQueries?: number;
  okRcodes?: number[];
}

export interface LoadResult {
  sent: number;
  answered: number;
  /** One line per failed query: "id 17: timeout" or "id 18: rcode 2". */
  failures: string[];
}

export interface Load {
  /** The newest reply received. */
  last(): Msg | undefined;
  /** Stops sending, waits for the queries in flight, and reports. */
  stop(): Promise<LoadResult>;
}

export function startLoad(port: number, name: string, qtype: number, o: LoadOptions = {}): Load {
  const { intervalMs = 5, timeoutMs = 2000, maxQueries = 20_000, okRcodes = [0] } = o;
  const sock = dgram.createSocket("udp4");
  const pending = new Map<number, NodeJS.Timeout>();
  const result: LoadResult = { sent: 0, answered: 0, failures: [] };
  let last: Msg | undefined;
  let drained: (() => void) | undefined;
  const settle = (id: number) => {
    clearTimeout(pending.get(id));
    pending.delete(id);
    if (pending.size === 0) drained?.();
  };
  sock.on("message", (buf) => {
    let m: Msg;
    try {
      m = decode(buf);
    } catch {
      return;
    }
    if (!pending.has(m.id)) return;
    settle(m.id);
    result.answered++;
    last = m;
    if (!okRcodes.includes(m.rcode)) result.failures.push(`id ${m.id}: rcode ${m.rcode}`);
  });
  const timer = setInterval(() => {
    if (result.sent >= maxQueries) {
      clearInterval(timer);
      return;
    }
    const id = result.sent++ & 0xffff;
    pending.set(
      id,
      setTimeout(() => {
        result.failures.push(`id ${id}: timeout`);
        settle(id);
      }, timeoutMs),
    );
    sock.send(encode(newQuery(name, qtype, 1, id)), port, "127.0.0.1");
  }, intervalMs);
  return {
    last: () => last,
    async stop() {
      clearInterval(timer);
      if (pending.size > 0) await new Promise<void>((r) => (drained = r));
      sock.close();
      return result;
    },
  };
}
