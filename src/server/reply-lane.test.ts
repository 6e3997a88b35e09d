import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { ReplyLane } from "./reply-lane.ts";
import { FrameReader } from "../dns/tcp-frames.ts";

/** A connected pair on loopback: the server's socket and the client's, with the frames it read. */
async function pair(): Promise<{ server: net.Socket; client: net.Socket; frames: Buffer[]; close(): void }> {
  const listener = net.createServer();
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  const accepted = new Promise<net.Socket>((r) => listener.once("connection", r));
  const client = net.connect((listener.address() as net.AddressInfo).port, "127.0.0.1");
  const server = await accepted;
  // As the listener does: a reset connection is no failure of the test.
  for (const s of [server, client]) s.on("error", () => {});
  const frames: Buffer[] = [];
  const reader = new FrameReader();
  client.on("data", (chunk: Buffer) => reader.push(chunk, (f) => void frames.push(Buffer.from(f))));
  return {
    server,
    client,
    frames,
    close() {
      client.destroy();
      server.destroy();
      listener.close();
    },
  };
}

const msg = (text: string) => Buffer.from(text);
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
};
/** "pending" when the promise has not settled after a while. */
const settledSoon = <T>(p: Promise<T>) =>
  Promise.race([p, new Promise<"pending">((r) => setTimeout(() => r("pending"), 300))]);

test("a stream's messages go out back to back: other replies wait for its last one", async () => {
  const p = await pair();
  try {
    const lane = new ReplyLane(p.server, 5000);
    const axfr = {};
    const other = {};
    lane.end({}, msg("before"));
    assert.equal(await lane.stream(axfr, msg("xfr-1")), true);
    lane.end(other, msg("other"));
    assert.equal(await lane.stream(axfr, msg("xfr-2")), true);
    // A second stream on the connection waits for the first to end.
    const second = {};
    const secondWrite = lane.stream(second, msg("xfr2-1"));
    lane.end(axfr, msg("xfr-3"));
    assert.equal(await secondWrite, true);
    lane.end(second, msg("xfr2-2"));
    await until(() => p.frames.length === 7);
    assert.deepEqual(
      p.frames.map((f) => f.toString()),
      ["before", "xfr-1", "xfr-2", "xfr-3", "other", "xfr2-1", "xfr2-2"],
    );
  } finally {
    p.close();
  }
});

test("a stream waits while the client reads nothing, holding no more than the socket's buffer", async () => {
  const p = await pair();
  try {
    p.client.pause();
    const lane = new ReplyLane(p.server, 60_000);
    const owner = {};
    const big = Buffer.alloc(60_000, 1);
    let written = 0;
    let state: boolean | "pending" = true;
    // The kernel's buffers on both ends take a few MB; then a write must wait.
    for (let i = 0; i < 2000 && state !== "pending"; i++) {
      state = await settledSoon(lane.stream(owner, big));
      written++;
    }
    assert.equal(state, "pending", `${written} messages written and none waited`);
    assert.ok(
      p.server.writableLength <= 2 * 65536,
      `${p.server.writableLength} octets queued in the process`,
    );
    const stuck = p.frames.length;
    p.client.resume();
    await until(() => p.frames.length >= written);
    assert.ok(p.frames.length > stuck);
  } finally {
    p.close();
  }
});

test("a stream whose client reads nothing for the stall time is dropped with its connection", async () => {
  const p = await pair();
  try {
    p.client.pause();
    const lane = new ReplyLane(p.server, 100);
    const owner = {};
    let ok = true;
    for (let i = 0; i < 2000 && ok; i++) ok = await lane.stream(owner, Buffer.alloc(60_000));
    assert.equal(ok, false);
    assert.ok(p.server.destroyed);
  } finally {
    p.close();
  }
});

test("a stream learns that its client left; what waited behind it gives up", async () => {
  const p = await pair();
  try {
    const lane = new ReplyLane(p.server, 5000);
    const owner = {};
    assert.equal(await lane.stream(owner, msg("one")), true);
    const waiting = lane.stream({}, msg("other stream"));
    p.client.destroy();
    await until(() => p.server.destroyed);
    assert.equal(await lane.stream(owner, msg("two")), false);
    assert.equal(await waiting, false);
    lane.end(owner, msg("last"));
  } finally {
    p.close();
  }
});
