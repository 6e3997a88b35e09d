// The in-process parts of bench/packages.ts, each in a fresh process (`node --expose-gc`); encode and
// pino alternate A and B in rounds, cache measures one side per process. One JSON line per round.
//   encode:          dns2's Packet.toBuffer against src/dns/encode.ts, for a 120-record answer
//   cache LRU_DIR store|lru-cache: the answer store (src/answers/store.ts), or lru-cache (installed in
//                    LRU_DIR, not a dependency): bytes per entry, lookups per second, a full GC's pause
//   pino:            a pino line to /dev/null against JSON.stringify and a write
//   dns2-server:     serves `NAME A 192.0.2.1` for every question with dns2's createServer (UDP, on
//                    127.0.0.1, port 0) and prints "listening PORT" (for the QPS part)

import { createRequire } from "node:module";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "3" } },
});
const [part, lruDir] = positionals;
const ROUNDS = Number(values.rounds);
const require = createRequire(import.meta.url);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** Nanoseconds per call of `fn` over `n` calls (after a warm-up of n/10). */
function nsPer(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < n / 10; i++) fn(i);
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t) / n;
}

const print = (o: object) => console.log(JSON.stringify(o));

// --- encode ---------------------------------------------------------------------------------------

/** A 120-record A answer for big.example.: the size of a large headless Service's reply. */
async function encodePart(): Promise<void> {
  const { Packet } = require("dns2") as { Packet: Dns2Packet };
  const { encode } = await import("../src/dns/encode.ts");
  const { parseRRText } = await import("../src/dns/text.ts");
  const addr = (i: number) => `10.1.${i >> 8}.${i & 255}`;
  const msg = {
    id: 1,
    qr: true,
    opcode: 0,
    aa: true,
    tc: false,
    rd: false,
    ra: false,
    ad: false,
    cd: false,
    rcode: 0,
    question: [{ name: "big.example.", type: 1, class: 1 }],
    answer: Array.from({ length: 120 }, (_, i) => parseRRText(`big.example. 30 IN A ${addr(i)}`)),
    authority: [],
    additional: [],
  };
  const packet = new Packet();
  packet.header.id = 1;
  packet.header.qr = 1;
  packet.header.aa = 1;
  packet.questions.push({ name: "big.example", type: Packet.TYPE.A, class: Packet.CLASS.IN });
  for (let i = 0; i < 120; i++) {
    packet.answers.push({
      name: "big.example",
      type: Packet.TYPE.A,
      class: Packet.CLASS.IN,
      ttl: 30,
      address: addr(i),
    });
  }
  const sizes = { dns2: packet.toBuffer().length, clusterdns: encode(msg).length };
  for (let r = 1; r <= ROUNDS; r++) {
    // dns2 is about 100 times slower: fewer calls, about the same time.
    const dns2Us = nsPer(200, () => packet.toBuffer()) / 1000;
    const ownUs = nsPer(10_000, () => encode(msg)) / 1000;
    print({ part: "encode", round: r, dns2Us, clusterdnsUs: ownUs, sizes });
  }
}

interface Dns2Packet {
  new (): {
    header: Record<string, number>;
    questions: object[];
    answers: object[];
    toBuffer(): Buffer;
  };
  TYPE: Record<string, number>;
  CLASS: Record<string, number>;
  createResponseFromRequest(req: object): { answers: object[] };
}

// --- cache ------------------------------------------------------------------------------------------

const ENTRIES = 100_000;
const LOOKUPS = 300_000;

/** The keys of ENTRIES questions as scan.ts writes them (name octets, type, class, a state octet), in
 * one buffer: as the server finds them in packets, and so that they add no object to the heap whose
 * collection is measured. */
function questionKeys(): { flat: Buffer; at: Int32Array; len: Int32Array } {
  const flat = Buffer.alloc(ENTRIES * 64);
  const at = new Int32Array(ENTRIES);
  const len = new Int32Array(ENTRIES);
  let p = 0;
  for (let i = 0; i < ENTRIES; i++) {
    at[i] = p;
    for (const l of `svc-${i}.team-${i % 100}.svc.cluster.local`.split(".")) {
      flat[p++] = l.length;
      p += flat.write(l, p, "latin1");
    }
    flat[p++] = 0;
    flat.set([0, 1, 0, 1, 0], p);
    p += 5;
    len[i] = p - at[i];
  }
  return { flat, at, len };
}

/** A reply the size of a Service's A answer (header, question, one record). */
const REPLY = new Uint8Array(12 + 45 + 16).fill(7);

/** The JS heap and the memory of ArrayBuffers (Buffers' pools), and RSS, after a full GC. */
function memory(): { heap: number; buffers: number; rss: number } {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers, rss: m.rss };
}

/** The median of five full GCs' pauses, in ms: what holding the cache costs each collection. */
function gcPauseMs(): number {
  const t: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    gc();
    t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[2];
}

/** One side, in this process only (so that neither sees the other's freed memory): fills a cache of
 * ENTRIES answers, then looks LOOKUPS of them up, each reply copied out as a send would. */
async function cachePart(side: string): Promise<void> {
  const { flat, at, len } = questionKeys();
  const out = new Uint8Array(512);
  const order = Uint32Array.from({ length: LOOKUPS }, (_, i) => (i * 7919) % ENTRIES);
  // Loaded before the memory is first read: only the entries count.
  const { AnswerStore, Draft, EXPIRES, NO_SLOT } = await import("../src/answers/store.ts");
  const { hashBytes } = await import("../src/dns/key.ts");
  const { LRUCache } = require(join(lruDir ?? "/nowhere", "node_modules", "lru-cache")) as {
    LRUCache: new (o: { max: number }) => { set(k: string, v: Uint8Array): void; get(k: string): Uint8Array };
  };
  const emptyGcMs = gcPauseMs();
  const before = memory();
  let lookup: (k: number) => void;
  let accounted: number | undefined;
  if (side === "lru-cache") {
    const cache = new LRUCache({ max: ENTRIES });
    // As a server would use it: the key's octets as a latin1 string, the reply copied out of the packet.
    for (let i = 0; i < ENTRIES; i++)
      cache.set(flat.toString("latin1", at[i], at[i] + len[i]), Buffer.from(REPLY));
    lookup = (k) => out.set(cache.get(flat.toString("latin1", at[k], at[k] + len[k])));
  } else {
    const store = new AnswerStore({ capacity: ENTRIES });
    const d = new Draft();
    d.times[EXPIRES] = 1e12;
    // put()'s octets, one object moved along `flat`.
    const o = {
      key: flat,
      keyFrom: 0,
      keyLength: 0,
      hash: 0,
      reply: REPLY,
      replyFrom: 0,
      replyLength: REPLY.length,
      generation: store.generation,
    };
    for (let i = 0; i < ENTRIES; i++) {
      o.keyFrom = at[i];
      o.keyLength = len[i];
      o.hash = hashBytes(flat, at[i], at[i] + len[i]);
      store.put(d, o);
    }
    // Its typed arrays are mapped larger than they are used (store.ts, slotMemory), so arrayBuffers
    // overstates them: what the store accounts for (slab octets, arrays per slot, buckets) instead.
    const b = store.bytes();
    accounted = b.reserved + b.perSlot * ENTRIES + b.buckets;
    lookup = (k) => {
      const slot = store.get(flat, at[k], len[k], hashBytes(flat, at[k], at[k] + len[k]));
      if (slot === NO_SLOT) throw new Error("lost an entry");
      store.copyReply(slot, out, 0);
    };
  }
  const after = memory();
  const heap = (after.heap - before.heap) / ENTRIES;
  const bytes = heap + (accounted ?? after.buffers - before.buffers) / ENTRIES;
  const gcMs = gcPauseMs();
  const ns = nsPer(LOOKUPS, (i) => lookup(order[i]));
  print({
    part: "cache",
    side,
    entries: ENTRIES,
    bytesPerEntry: bytes,
    heapPerEntry: heap,
    rssPerEntry: (after.rss - before.rss) / ENTRIES,
    lookupsPerS: 1e9 / ns,
    gcMs,
    emptyGcMs,
  });
}

// --- pino -------------------------------------------------------------------------------------------

async function pinoPart(): Promise<void> {
  const { pino } = await import("pino");
  const fd = openSync("/dev/null", "w");
  // As src/log.ts sets it up, to /dev/null instead of stdout (pino writes synchronously by default).
  const log = pino(
    {
      level: "info",
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd, sync: true }),
  ).child({ plugin: "kubernetes" });
  const fields = { kind: "services", resourceVersion: "12345" };
  for (let r = 1; r <= ROUNDS; r++) {
    const pinoNs = nsPer(200_000, () => log.info(fields, "watch history expired (410), listing again"));
    const plainNs = nsPer(200_000, () => {
      const line = {
        level: "info",
        time: new Date().toISOString(),
        pid: process.pid,
        plugin: "kubernetes",
        ...fields,
        msg: "watch history expired (410), listing again",
      };
      writeSync(fd, `${JSON.stringify(line)}\n`);
    });
    const offNs = nsPer(2_000_000, () => log.debug(fields, "a debug line, off at level info"));
    print({ part: "pino", round: r, pinoNs, stringifyWriteNs: plainNs, debugOffNs: offNs });
  }
  closeSync(fd);
}

// --- dns2's server ---------------------------------------------------------------------------------

function dns2Server(): void {
  const dns2 = require("dns2") as {
    Packet: Dns2Packet;
    createServer(o: {
      udp: boolean;
      handle(req: { questions: { name: string }[] }, send: (res: object) => void): void;
    }): { listen(o: object): Promise<unknown>; addresses(): { udp?: { port: number } } };
  };
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle(req, send) {
      const res = Packet.createResponseFromRequest(req);
      const name = req.questions[0]?.name ?? "";
      res.answers.push({ name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 60, address: "192.0.2.1" });
      send(res);
    },
  });
  void server.listen({ udp: { port: 0, address: "127.0.0.1" } }).then(() => {
    console.log(`listening ${server.addresses().udp?.port}`);
  });
}

if (part === "encode") await encodePart();
else if (part === "cache") await cachePart(positionals[2] ?? "store");
else if (part === "pino") await pinoPart();
else if (part === "dns2-server") dns2Server();
else
  throw new Error(
    "usage: node --expose-gc bench/packages-micro.ts encode|cache LRU_DIR store|lru-cache|pino|dns2-server",
  );
