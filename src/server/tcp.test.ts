import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import net from "node:net";
import { Pipeline, type Peer } from "./pipeline.ts";
import { FrameReader, tcpFrame } from "../dns/tcp-frames.ts";
import { TcpListener, defaultTcpOptions } from "./tcp.ts";
import { halfOpenExchange } from "../../test/helpers/half-open.ts";

const log = pino({ level: "silent" });

test("an idle connection is dropped whole at the idle timeout, even if the client keeps its side open", async () => {
  const tcp = new TcpListener(
    new Pipeline("dns://:0", log),
    { ...defaultTcpOptions, idleTimeoutMs: 200 },
    log,
  );
  const port = await tcp.listen("127.0.0.1", 0);
  try {
    assert.equal((await halfOpenExchange(port, { waitMs: 1500 })).end, "dropped");
  } finally {
    await tcp.close();
  }
});

test("close() lets go of idle connections whole and returns, even if a client keeps its side open", async () => {
  const tcp = new TcpListener(new Pipeline("dns://:0", log), defaultTcpOptions, log);
  const port = await tcp.listen("127.0.0.1", 0);
  const client = halfOpenExchange(port, { waitMs: 1500 });
  await new Promise((r) => setTimeout(r, 100));
  await tcp.close();
  assert.equal((await client).end, "dropped");
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
    // Query 2 arrives with query 1: answered at once, but sent after the transfer's last message.
    client.write(Buffer.concat([query(1), query(2)]));
    await until(() => frames.length === 2);
    client.write(query(3));
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(calls, [1, 2], "query 3 is not read while the transfer goes out");
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
