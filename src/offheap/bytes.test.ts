import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "./bytes.ts";

/** The bytes `fill` writes, copied out of the writer's scratch buffer. */
function written(fill: (w: ByteWriter) => void): Buffer {
  const w = new ByteWriter();
  fill(w);
  return Buffer.from(w.bytes);
}

describe("offheap bytes: what the writer writes, the reader reads", () => {
  it("round-trips unsigned integers up to 2^53 - 1, in 1 to 8 bytes", () => {
    for (const [n, size] of [
      [0, 1],
      [127, 1],
      [128, 2],
      [2 ** 31, 5],
      [2 ** 32, 5],
      [2 ** 53 - 1, 8],
    ]) {
      const b = written((w) => w.uint(n));
      assert.equal(b.length, size, `${n}`);
      assert.equal(new ByteReader(b).uint(), n);
    }
  });

  it("round-trips 32-bit integers, signed", () => {
    const b = written((w) => {
      for (const n of [0, -1, 2 ** 31 - 1, -(2 ** 31)]) w.i32(n);
    });
    const r = new ByteReader(b);
    assert.deepEqual([r.i32(), r.i32(), r.i32(), r.i32()], [0, -1, 2 ** 31 - 1, -(2 ** 31)]);
  });

  it("round-trips UTF-8 text of any length among other fields, and grows its buffer", () => {
    const texts = ["", "a", "é", "日本語", "\u{1F600}", "x".repeat(200), "ü".repeat(5000)];
    const b = written((w) => {
      for (const s of texts) {
        w.u8(7);
        w.str(s);
        w.optStr(s === "a" ? undefined : s);
      }
      w.strs(texts);
    });
    const r = new ByteReader(b);
    for (const s of texts) {
      assert.equal(r.u8(), 7);
      assert.equal(r.str(), s);
      assert.equal(r.optStr(), s === "a" ? undefined : s);
    }
    assert.deepEqual(r.strs(), texts);
    assert.equal(r.pos, b.length);
  });
});

describe("offheap bytes: a value cut short or corrupt (a torn read) fails instead of hanging", () => {
  it("throws a RangeError for an integer that runs past the end", () => {
    assert.throws(() => new ByteReader(Buffer.alloc(0)).uint(), RangeError);
    assert.throws(() => new ByteReader(Buffer.from([0x80, 0x80])).uint(), RangeError);
    assert.throws(() => new ByteReader(Buffer.from([0x80])).str(), RangeError);
  });

  it("throws a RangeError for a list longer than the bytes left", () => {
    // 2^31 strings claimed in 6 bytes: no allocation of 2^31 slots, no loop over them.
    const b = written((w) => w.uint(2 ** 31));
    assert.throws(() => new ByteReader(Buffer.concat([b, Buffer.from([0])])).strs(), RangeError);
    assert.throws(() => new ByteReader(Buffer.from([3, 0, 0])).count(), RangeError);
    assert.equal(new ByteReader(Buffer.from([2, 0, 0])).count(), 2);
  });
});
