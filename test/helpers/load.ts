// A steady, bounded query load over UDP for tests that change a running server (reload, lameduck, API
// faults): one query every `intervalMs`, each waited for up to `timeoutMs`, going round a list of
// questions. A query counts as failed when it times out, its rcode is not in `okRcodes`, or (with
// `needAnswer`) its answer section is empty. The load stops by itself after `maxQueries`.

import dgram from "node:dgram";
import { encode } from "../../src/dns/encode.ts";
import { decode } from "../../src/dns/decode.ts";
import { newQuery, type Msg } from "../../src/dns/message.ts";

export interface LoadOptions {
  intervalMs?: number;
  timeoutMs?: number;
  maxQueries?: number;
  okRcodes?: number[];
  /** An empty answer section is a failure too (a known name that went missing). */
  needAnswer?: boolean;
  /** The server's address (127.0.0.1 when not given). */
  host?: string;
}

export interface Question {
  name: string;
  qtype: number;
}

export interface LoadResult {
  sent: number;
  answered: number;
  /** One line per failed query: "id 17 web.default.svc.cluster.local.: timeout", "...: rcode 2". */
  failures: string[];
}

export interface Load {
  /** The newest reply received. */
  last(): Msg | undefined;
  /** Stops sending, waits for the queries in flight, and reports. */
  stop(): Promise<LoadResult>;
}

export function startLoad(port: number, name: string, qtype: number, o: LoadOptions = {}): Load {
  return startMixedLoad(port, [{ name, qtype }], o);
}

/** The load over several questions, asked in turn. */
export function startMixedLoad(port: number, questions: readonly Question[], o: LoadOptions = {}): Load {
  const {
    intervalMs = 5,
    timeoutMs = 2000,
    maxQueries = 20_000,
    okRcodes = [0],
    needAnswer = false,
    host = "127.0.0.1",
  } = o;
  const sock = dgram.createSocket("udp4");
  /** Per query id in flight: its timeout and the name asked. */
  const pending = new Map<number, { timer: NodeJS.Timeout; name: string }>();
  const result: LoadResult = { sent: 0, answered: 0, failures: [] };
  let last: Msg | undefined;
  let drained: (() => void) | undefined;
  const settle = (id: number) => {
    clearTimeout(pending.get(id)?.timer);
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
    const asked = pending.get(m.id);
    if (asked === undefined) return;
    settle(m.id);
    result.answered++;
    last = m;
    if (!okRcodes.includes(m.rcode)) result.failures.push(`id ${m.id} ${asked.name}: rcode ${m.rcode}`);
    else if (needAnswer && m.answer.length === 0) result.failures.push(`id ${m.id} ${asked.name}: no answer`);
  });
  const timer = setInterval(() => {
    if (result.sent >= maxQueries) {
      clearInterval(timer);
      return;
    }
    const q = questions[result.sent % questions.length];
    const id = result.sent++ & 0xffff;
    const expiry = setTimeout(() => {
      result.failures.push(`id ${id} ${q.name}: timeout`);
      settle(id);
    }, timeoutMs);
    pending.set(id, { timer: expiry, name: q.name });
    sock.send(encode(newQuery(q.name, q.qtype, 1, id)), port, host);
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
