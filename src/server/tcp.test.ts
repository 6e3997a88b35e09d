import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { pino } from "pino";
import { Pipeline, type Peer } from "./pipeline.ts";
import { TcpListener, defaultTcpOptions, type TcpOptions } from "./tcp.ts";
import { halfOpenExchange } from "../../test/helpers/half-open.ts";
import { encode } from "../dns/encode.ts";
import { newQuery, replyTo } from "../dns/message.ts";
import { FrameReader, tcpFrame } from "../dns/tcp-frames.ts";
import { Type } from "../dns/constants.ts";

const log = pino({ level: "silent" });

/** A listener whose one zone, example.org, answers every A query with 192.0.2.7 (TTL 60: from the
 * second query on, the answer cache replies at once). */
async function listener(opts: Partial<TcpOptions> = {}) {
  const pipeline = new Pipeline("dns://:0", log);
  pipeline.mux.add("example.org.", {
    keys: [],
    zones: ["example.org."],
    chain: {
      name: "answer",
      async serve(req) {
        const r = replyTo(req.msg);
        r.answer.push({
          name: req.qname,
          type: Type.A,
          class: 1,
          ttl: 60,
          data: { type: 1, address: "192.0.2.7" },
        });
        return r;
      },
    },
    hooks: [],
    bind: [],
    directives: [],
    shared: new Map(),
  });
  const tcp = new TcpListener(pipeline, { ...defaultTcpOptions, ...opts }, log);
  return { tcp, port: await tcp.listen("127.0.0.1", 0) };
}

const query = (id: number) => tcpFrame(encode(newQuery("www.example.org.", Type.A, 1, id)));

/** Connects and resolves once connected; `closed` resolves when the server drops the connection. */
async function connect(
  port: number,
): Promise<{ sock: net.Socket; closed: Promise<void>; replies: () => number }> {
  const sock = net.connect(port, "127.0.0.1");
  let received = 0;
  sock.on("data", (d: Buffer) => (received += d.length));
  sock.on("error", () => undefined);
  const closed = new Promise<void>((r) => sock.once("close", () => r()));
  await new Promise((r) => sock.once("connect", r));
  return { sock, closed, replies: () => received };
}

/** Resolves "closed" if `closed` settles within ms, else "open". */
const within = (closed: Promise<void>, ms: number) =>
  Promise.race([closed.then(() => "closed"), new Promise((r) => setTimeout(() => r("open"), ms))]);

test("an idle connection is dropped whole at the idle timeout, even if the client keeps its side open", async () => {
  const { tcp, port } = await listener({ readMs: 200, idleMs: 200 });
  try {
    assert.equal((await halfOpenExchange(port, { waitMs: 1500 })).end, "dropped");
  } finally {
    await tcp.close();
  }
});

test("close() lets go of idle connections whole and returns, even if a client keeps its side open", async () => {
  const { tcp, port } = await listener();
  const client = halfOpenExchange(port, { waitMs: 1500 });
  await new Promise((r) => setTimeout(r, 100));
  await tcp.close();
  assert.equal((await client).end, "dropped");
});

test("a query sent one octet at a time cannot hold a connection past the read deadline (slowloris)", async () => {
  const { tcp, port } = await listener({ readMs: 300, idleMs: 300 });
  try {
    const c = await connect(port);
    // One octet every 50 ms: activity all along, but no whole query for 2.5 s.
    const frame = Buffer.concat([Buffer.from([0, 50]), Buffer.alloc(50, 1)]);
    let at = 0;
    const drip = setInterval(() => c.sock.write(frame.subarray(at, ++at)), 50);
    const end = await within(c.closed, 2500);
    clearInterval(drip);
    c.sock.destroy();
    assert.equal(end, "closed", "the server closed it before the query could complete");
    assert.ok(at < frame.length, `${at} of ${frame.length} octets were sent`);
  } finally {
    await tcp.close();
  }
});

test("whole queries keep a connection open; the idle deadline counts from the last reply", async () => {
  const { tcp, port } = await listener({ readMs: 400, idleMs: 400 });
  try {
    const c = await connect(port);
    for (let i = 0; i < 8; i++) {
      c.sock.write(query(i));
      await new Promise((r) => setTimeout(r, 150));
    }
    assert.equal(await within(c.closed, 0), "open", "8 queries 150 ms apart: 1.2 s, past 3 deadlines");
    assert.ok(c.replies() > 0);
    assert.equal(await within(c.closed, 2000), "closed", "then silence: closed");
  } finally {
    await tcp.close();
  }
});

test("at the cap, a new connection takes the place of the one idle longest, and is answered", async () => {
  const { tcp, port } = await listener({ maxConnections: 5 });
  try {
    const idle = [];
    for (let i = 0; i < 5; i++) idle.push(await connect(port));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(tcp.connections, 5);
    const fresh = await connect(port);
    fresh.sock.write(query(1));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(fresh.replies() > 0, "the new connection is answered");
    assert.equal(await within(idle[0].closed, 1000), "closed", "the oldest idle connection made room");
    assert.equal(await within(idle[4].closed, 0), "open", "the others stay");
    assert.equal(tcp.connections, 5);
    for (const c of [...idle, fresh]) c.sock.destroy();
  } finally {
    await tcp.close();
  }
});

test("a client that pipelines queries and never reads: the server stops reading it, then closes it", async () => {
  const { tcp, port } = await listener({ writeMs: 300, idleMs: 60_000 });
  try {
    const c = await connect(port);
    c.sock.pause(); // never reads: the replies pile up in the kernel, then in the server
    const burst = Buffer.concat(Array.from({ length: 5000 }, (_, i) => query(i)));
    // Up to 2M queries (~70 MB, ~100 MB of replies), written only as fast as the server takes them.
    const total = 2_000_000;
    let sent = 0;
    const writer = setInterval(() => {
      while (sent < total && c.sock.writableLength < 1 << 20) {
        c.sock.write(burst);
        sent += 5000;
      }
    }, 20);
    const end = await within(c.closed, 20_000);
    clearInterval(writer);
    c.sock.destroy();
    assert.equal(end, "closed", "closed by the server: its replies made no progress for `write`");
    assert.ok(sent < total, `the server stopped reading: ${sent} of ${total} queries taken`);
  } finally {
    await tcp.close();
  }
});

test("while a reply of several messages goes out, the connection's other replies wait and no query is read", async () => {
  const calls: number[] = [];
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const reply = (query: Buffer, text: string) => Buffer.concat([query.subarray(0, 2), Buffer.from(text)]);
  // A stand-in pipeline: query 1 streams two messages, waits, then ends; the others answer at once.
  const pipeline = {
    handle(buf: Buffer, peer: Peer) {
      const id = buf.readUInt16BE(0);
      calls.push(id);
      if (id !== 1) return reply(buf, `answer-${id}`);
      return (async () => {
        await peer.write!(reply(buf, "xfr-a"));
        await peer.write!(reply(buf, "xfr-b"));
        await released;
        return reply(buf, "xfr-end");
      })();
    },
  } as unknown as Pipeline;
  const tcp = new TcpListener(pipeline, defaultTcpOptions, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const client = net.connect(port, "127.0.0.1");
  const frames: string[] = [];
  const reader = new FrameReader();
  client.on("data", (c: Buffer) =>
    reader.push(c, (f) => void frames.push(`${f.readUInt16BE(0)}:${f.subarray(2)}`)),
  );
  const query = (id: number) => tcpFrame(Buffer.from([id >> 8, id & 255, 0, 0]));
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  try {
    // Query 2 arrives with query 1, in the same chunk: it waits there, unread, until the transfer is
    // out, and so does query 3, which comes later.
    client.write(Buffer.concat([query(1), query(2)]));
    await until(() => frames.length === 2);
    client.write(query(3));
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(calls, [1], "no query is read while the transfer goes out");
    assert.deepEqual(frames, ["1:xfr-a", "1:xfr-b"]);
    release();
    await until(() => frames.length === 5);
    assert.deepEqual(frames, ["1:xfr-a", "1:xfr-b", "1:xfr-end", "2:answer-2", "3:answer-3"]);
    assert.deepEqual(calls, [1, 2, 3]);
  } finally {
    client.destroy();
    await tcp.close();
  }
});

test("at maxInFlight reading stops, and goes on as soon as one query is done, not all of them", async () => {
  // Queries 0-3 wait until released one by one; a connection may have 2 in flight.
  const waiting: (() => void)[] = [];
  const calls: number[] = [];
  const pipeline = {
    handle(buf: Buffer) {
      const id = buf.readUInt16BE(0);
      calls.push(id);
      return new Promise<Buffer>((r) =>
        waiting.push(() => r(Buffer.concat([buf.subarray(0, 2), Buffer.alloc(10)]))),
      );
    },
  } as unknown as Pipeline;
  const tcp = new TcpListener(pipeline, { ...defaultTcpOptions, maxInFlight: 2 }, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const c = await connect(port);
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  try {
    c.sock.write(Buffer.concat([0, 1, 2, 3].map((id) => tcpFrame(Buffer.from([0, id, 0, 0])))));
    await until(() => calls.length === 2);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(calls, [0, 1], "two in flight: no more read");
    waiting.shift()!();
    await until(() => calls.length === 3);
    assert.deepEqual(calls, [0, 1, 2], "one done: the next is read while the other still waits");
  } finally {
    for (const w of waiting) w();
    c.sock.destroy();
    await tcp.close();
  }
});

/** A stand-in pipeline: each query's reply is its 2-octet ID and `size - 2` octets, given at once, or
 * after `delayMs` for the IDs `slow` picks (as a forwarded query is). `calls` counts the queries. */
function standIn(size: number, slow: (id: number) => boolean = () => false, delayMs = 100) {
  const s = { calls: 0, pipeline: undefined as unknown as Pipeline };
  s.pipeline = {
    handle(buf: Buffer) {
      s.calls++;
      const out = Buffer.alloc(size);
      buf.copy(out, 0, 0, 2);
      if (!slow(buf.readUInt16BE(0))) return out;
      return new Promise<Buffer>((r) => setTimeout(() => r(out), delayMs));
    },
  } as unknown as Pipeline;
  return s;
}

const idFrame = (id: number) => tcpFrame(Buffer.from([id >> 8, id & 255, 0, 0]));

test("a client that half-closes after its queries gets every reply, the slow ones too, then the server closes", async () => {
  // Odd IDs are answered 100 ms later (as forwarded names are), even ones at once (as cached ones).
  const s = standIn(20, (id) => id % 2 === 1);
  const tcp = new TcpListener(s.pipeline, defaultTcpOptions, log);
  const port = await tcp.listen("127.0.0.1", 0);
  try {
    const sock = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const ids: number[] = [];
    const reader = new FrameReader();
    sock.on("data", (c: Buffer) => reader.push(c, (f) => void ids.push(f.readUInt16BE(0))));
    sock.on("error", () => undefined);
    const ended = new Promise<string>((r) => {
      sock.once("end", () => r("end"));
      setTimeout(() => r("timeout"), 3000);
    });
    await new Promise((r) => sock.once("connect", r));
    sock.end(Buffer.concat(Array.from({ length: 10 }, (_, i) => idFrame(i))));
    assert.equal(await ended, "end", "the server closes its side once it has answered");
    assert.deepEqual(
      ids.sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    sock.destroy();
  } finally {
    await tcp.close();
  }
});

test("a connection's backlog of queries answered at once yields to the event loop every few dozen", async () => {
  const s = standIn(20);
  const tcp = new TcpListener(s.pipeline, defaultTcpOptions, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const c = await connect(port);
  // Counts the queries answered between two turns of the event loop.
  let most = 0;
  let last = 0;
  let turns = 0;
  let probing = true;
  const probe = () => {
    most = Math.max(most, s.calls - last);
    last = s.calls;
    turns++;
    if (probing) setImmediate(probe);
  };
  try {
    const total = 20_000;
    c.sock.write(Buffer.concat(Array.from({ length: total }, (_, i) => idFrame(i))));
    setImmediate(probe);
    for (let i = 0; i < 500 && c.replies() < total * 22; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(c.replies(), total * 22, "every query answered (20 octets and the length)");
    assert.ok(most <= 64, `at most 64 queries between two turns, saw ${most} (${turns} turns)`);
  } finally {
    probing = false;
    c.sock.destroy();
    await tcp.close();
  }
});

test("a client that never reads stops being read once its replies wait in the kernel, not only in Node", async () => {
  // 30,000 queries with replies of 500 octets: 15 MB, far more than the kernel takes for a client that
  // reads nothing (its receive buffer, our send buffer: a few MB on Linux's defaults).
  const s = standIn(500);
  const tcp = new TcpListener(s.pipeline, { ...defaultTcpOptions, writeMs: 60_000, idleMs: 60_000 }, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const c = await connect(port);
  c.sock.pause();
  try {
    c.sock.write(Buffer.concat(Array.from({ length: 30_000 }, (_, i) => idFrame(i))));
    // Until the server stops taking queries.
    let before = -1;
    for (let i = 0; i < 100 && s.calls !== before; i++) {
      before = s.calls;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(s.calls > 0);
    assert.ok(s.calls < 4000, `at most 2 MB of replies unread: ${s.calls} queries answered`);
  } finally {
    c.sock.destroy();
    await tcp.close();
  }
});
