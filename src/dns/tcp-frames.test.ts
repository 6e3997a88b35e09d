import { test } from "node:test";
import assert from "node:assert/strict";
import { FrameReader, tcpFrame } from "./tcp-frames.ts";

const msg = (n: number, fill: number) => Buffer.alloc(n, fill);

test("tcpFrame puts the length in network order before the message", () => {
  const f = tcpFrame(msg(300, 7));
  assert.equal(f.length, 302);
  assert.deepEqual([...f.subarray(0, 2)], [1, 44]);
  assert.deepEqual(f.subarray(2), msg(300, 7));
  assert.deepEqual([...tcpFrame(Buffer.alloc(0))], [0, 0]);
});

test("FrameReader finds the same messages however the stream is cut", () => {
  const messages = [msg(12, 1), msg(0, 0), msg(513, 2), msg(65535, 3), msg(40, 4)];
  const stream = Buffer.concat(messages.map(tcpFrame));
  for (const cut of [1, 2, 3, 7, 511, 4096, stream.length]) {
    const r = new FrameReader();
    const got: Buffer[] = [];
    for (let at = 0; at < stream.length; at += cut) {
      r.push(stream.subarray(at, at + cut), (f) => void got.push(Buffer.from(f)));
    }
    assert.deepEqual(got, messages, `chunks of ${cut}`);
    assert.equal(r.buffered, 0);
  }
});

test("FrameReader keeps a partial message, copied out of its chunk, and stops when asked", () => {
  const r = new FrameReader();
  const chunk = Buffer.concat([tcpFrame(msg(5, 1)), tcpFrame(msg(5, 2)), tcpFrame(msg(9, 3)).subarray(0, 4)]);
  const got: number[] = [];
  r.push(chunk, (f) => void got.push(f[0]));
  assert.deepEqual(got, [1, 2]);
  assert.equal(r.buffered, 4);
  chunk.fill(0xff);
  r.push(msg(7, 3), (f) => void got.push(f.length, f[8]));
  assert.deepEqual(got, [1, 2, 9, 3], "the kept part survives its chunk being reused");

  const stopping = new FrameReader();
  const seen: number[] = [];
  const two = Buffer.concat([tcpFrame(msg(1, 1)), tcpFrame(msg(1, 2)), tcpFrame(msg(3, 3)).subarray(0, 3)]);
  stopping.push(two, (f) => {
    seen.push(f[0]);
    return false;
  });
  assert.deepEqual(seen, [1]);
  assert.equal(stopping.buffered, 6, "the rest is held, not dropped");
  two.fill(0xff);
  stopping.push(Buffer.alloc(0), (f) => void seen.push(f[0]));
  assert.deepEqual(seen, [1, 2], "an empty push goes on from what was held");
  assert.ok(stopping.midMessage);
  stopping.push(Buffer.from([3, 3]), (f) => void seen.push(f.length));
  assert.deepEqual(seen, [1, 2, 3]);
  assert.equal(stopping.buffered, 0);
  assert.ok(!stopping.midMessage);
});

test("FrameReader: a message of 65535 octets in one-octet pieces, its length prefix split too", () => {
  const big = Buffer.alloc(65535, 9);
  big[65534] = 7;
  const stream = Buffer.concat([tcpFrame(big), tcpFrame(msg(0, 0)), tcpFrame(msg(2, 5))]);
  const r = new FrameReader();
  const got: Buffer[] = [];
  for (let at = 0; at < stream.length; at++) {
    r.push(stream.subarray(at, at + 1), (f) => void got.push(Buffer.from(f)));
    if (at === 0) assert.ok(r.midMessage, "half a length prefix is the start of a message");
  }
  assert.deepEqual(
    got.map((f) => [f.length, f.at(-1)]),
    [
      [65535, 7],
      [0, undefined],
      [2, 5],
    ],
  );
  assert.equal(r.buffered, 0);
});
