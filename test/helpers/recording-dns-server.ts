// A tiny authoritative DNS server (UDP and TCP on one port) that answers from a fixed table and
// records every query it gets, in order. Run as a script (usually inside a network namespace):
//
//   node test/helpers/recording-dns-server.ts TABLE_JSON [ADDRESS] [PORT]
//
// TABLE_JSON maps absolute lowercase names to entries (see Entry). A name not in the table is
// NXDOMAIN; one without records of the asked type is NODATA; `drop` makes a query time out. Answers
// carry AA and RA, as a cluster DNS server's do: glibc takes a NOERROR reply with no answers, AA=0,
// RA=0 and no additional records for a referral and moves on to the next server (`noAuthority`).
//
// stdout, one JSON object per line: {"ready":PORT} once listening; {"name","type","transport"} for
// every query, written before the reply is sent; {"sync":N} in answer to a line "sync N" on stdin,
// so a reader that sees it knows every query received before it has been printed.

import type { ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { createServer, type Socket } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { decode } from "../../src/dns/decode.ts";
import { encode } from "../../src/dns/encode.ts";
import { replyTo, type Msg, type RData, type RR } from "../../src/dns/message.ts";
import { Rcode, Type, rcodeFromName, typeName } from "../../src/dns/constants.ts";

export interface Entry {
  A?: string[];
  AAAA?: string[];
  /** An alias: answers carry this CNAME and then the target's records of the asked type, if any. */
  CNAME?: string;
  /** Over UDP, an empty reply with TC set (TCP gets the whole answer). */
  truncate?: boolean;
  /** Replies without AA and RA: an empty NOERROR then looks like a referral to glibc. */
  noAuthority?: boolean;
  /** Types whose queries get no reply at all ("*" for every type). */
  drop?: string[];
  /** An rcode name for every type ("SERVFAIL"), or per type name ({ "AAAA": "SERVFAIL" }). */
  rcode?: string | Record<string, string>;
}

export type Table = Record<string, Entry>;

export interface RecordedQuery {
  name: string;
  type: string;
  transport: "udp" | "tcp";
}

function answerFor(table: Table, name: string, type: number): { rcode: number; answer: RR[] } {
  const entry = table[name.toLowerCase()];
  if (entry === undefined) return { rcode: Rcode.NXDOMAIN, answer: [] };
  const forced = typeof entry.rcode === "string" ? entry.rcode : entry.rcode?.[typeName(type)];
  if (forced !== undefined) return { rcode: rcodeFromName(forced) ?? Rcode.SERVFAIL, answer: [] };
  const answer: RR[] = [];
  let owner = name;
  let at: Entry | undefined = entry;
  // Follow in-table aliases the way an authoritative server does, a bounded number of steps.
  for (let hops = 0; at?.CNAME !== undefined && type !== Type.CNAME && hops < 8; hops++) {
    answer.push({ name: owner, type: Type.CNAME, class: 1, ttl: 30, data: { type: 5, target: at.CNAME } });
    owner = at.CNAME;
    at = table[owner.toLowerCase()];
  }
  const addresses = type === Type.A ? at?.A : type === Type.AAAA ? at?.AAAA : undefined;
  for (const address of addresses ?? []) {
    const data: RData = type === Type.A ? { type: 1, address } : { type: 28, address };
    answer.push({ name: owner, type, class: 1, ttl: 30, data });
  }
  return { rcode: Rcode.NOERROR, answer };
}

export interface TableServer {
  port: number;
  close(): Promise<void>;
}

/** The reply to one query (undefined: drop it); `tcp` replies are never truncated. */
function replyFor(table: Table, q: Msg, tcp: boolean): Buffer | undefined {
  const question = q.question[0];
  const entry = table[question.name.toLowerCase()];
  if (entry?.drop?.includes("*") || entry?.drop?.includes(typeName(question.type))) return undefined;
  const { rcode, answer } = answerFor(table, question.name, question.type);
  const r = replyTo(q, rcode);
  r.aa = !entry?.noAuthority;
  r.ra = !entry?.noAuthority;
  r.answer = answer;
  if (entry?.truncate && !tcp) {
    r.tc = true;
    r.answer = [];
  }
  return encode(r);
}

/**
 * Serves `table` over UDP and TCP on one port (0: any free one) and calls `onQuery` for every query,
 * in order, before it is answered. In-process, for unit tests; main() runs it as a script.
 */
export async function serveTable(
  table: Table,
  address: string,
  port: number,
  onQuery: (q: RecordedQuery) => void,
): Promise<TableServer> {
  const record = (q: Msg, transport: "udp" | "tcp") =>
    onQuery({ name: q.question[0].name, type: typeName(q.question[0].type), transport });
  const parse = (packet: Buffer): Msg | undefined => {
    try {
      const q = decode(packet);
      return q.qr || q.question.length !== 1 ? undefined : q;
    } catch {
      return undefined;
    }
  };
  // Port 0 lets the system pick a UDP port, which TCP may find taken: pick again (a few times).
  for (let attempt = 0; ; attempt++) {
    try {
      return await listen(port);
    } catch (err) {
      if (port !== 0 || attempt >= 5 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    }
  }

  async function listen(at: number): Promise<TableServer> {
    const udp = createSocket(address.includes(":") ? "udp6" : "udp4");
    udp.on("message", (packet, rinfo) => {
      const q = parse(packet);
      if (q === undefined) return;
      record(q, "udp");
      const reply = replyFor(table, q, false);
      if (reply) udp.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((r) => udp.bind(at, address, r));
    const bound = udp.address().port;
    const conns = new Set<Socket>();
    const tcp = createServer((conn) => {
      conns.add(conn);
      conn.on("close", () => conns.delete(conn));
      conn.on("error", () => conn.destroy());
      let data = Buffer.alloc(0);
      conn.on("data", (d: Buffer) => {
        data = Buffer.concat([data, d]);
        while (data.length >= 2 && data.length >= 2 + data.readUInt16BE(0)) {
          const q = parse(data.subarray(2, 2 + data.readUInt16BE(0)));
          data = data.subarray(2 + data.readUInt16BE(0));
          if (q === undefined) continue;
          record(q, "tcp");
          const reply = replyFor(table, q, true);
          if (reply === undefined) continue;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(reply.length);
          conn.write(Buffer.concat([len, reply]));
        }
      });
    });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(bound, address, () => resolve());
      });
    } catch (err) {
      // A UDP socket left open would keep the test process alive for good.
      await new Promise<void>((r) => udp.close(() => r()));
      throw err;
    }
    return {
      port: bound,
      async close() {
        for (const c of conns) c.destroy();
        await new Promise<void>((r) => tcp.close(() => r()));
        await new Promise<void>((r) => udp.close(() => r()));
      },
    };
  }
}

async function main(): Promise<void> {
  const [tableJson, address = "127.0.0.1", portText = "53"] = process.argv.slice(2);
  const table = JSON.parse(tableJson ?? "{}") as Table;
  const out = (o: unknown) => process.stdout.write(JSON.stringify(o) + "\n");
  const server = await serveTable(table, address, Number(portText), out);
  out({ ready: server.port });
  createInterface({ input: process.stdin }).on("line", (line) => {
    const m = /^sync (\d+)$/.exec(line.trim());
    if (m) out({ sync: Number(m[1]) });
  });
  process.stdin.on("end", () => {
    void server.close().then(() => process.exit(0));
  });
}

if (import.meta.main) await main();

/** Something that can start a process, such as a Netns. */
export interface Spawner {
  spawn(cmd: string, args?: string[]): ChildProcess;
}

export interface Recorder {
  /** The UDP port it listens on. */
  port: number;
  /** Every query recorded since the last take(), once the server has printed them all. */
  take(): Promise<RecordedQuery[]>;
  stop(): Promise<void>;
}

/** Starts this script through `where` (e.g. inside a namespace) and waits until it listens. */
export async function startRecorder(
  where: Spawner,
  table: Table,
  address = "127.0.0.1",
  port = 53,
): Promise<Recorder> {
  const script = fileURLToPath(import.meta.url);
  const child = where.spawn(process.execPath, [script, JSON.stringify(table), address, String(port)]);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  let pending: RecordedQuery[] = [];
  let waiters: { n: number; done: () => void }[] = [];
  let onReady: ((port: number) => void) | undefined;
  let syncs = 0;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const o = JSON.parse(line) as { ready?: number; sync?: number } & Partial<RecordedQuery>;
    if (o.ready !== undefined) onReady?.(o.ready);
    else if (o.sync !== undefined) {
      const n = o.sync;
      waiters = waiters.filter((w) => (w.n === n ? (w.done(), false) : true));
    } else if (o.name !== undefined && o.type !== undefined && o.transport !== undefined) {
      pending.push({ name: o.name, type: o.type, transport: o.transport });
    }
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const listening = await new Promise<number>((resolve, reject) => {
    onReady = resolve;
    child.once("exit", (code) =>
      reject(new Error(`recording DNS server exited (${code}): ${stderr.trim()}`)),
    );
  });
  return {
    port: listening,
    async take() {
      const n = ++syncs;
      await new Promise<void>((done) => {
        waiters.push({ n, done });
        child.stdin!.write(`sync ${n}\n`);
      });
      const got = pending;
      pending = [];
      return got;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin!.end();
        await exited;
      }
    },
  };
}
