import { test } from "node:test";
import assert from "node:assert/strict";
import { Slab } from "./slab.ts";

test("a block is the smallest size class that holds it, a quarter apart", () => {
  const s = new Slab();
  const size = (n: number) => s.capacity(s.alloc(n));
  assert.deepEqual([1, 64, 65, 80, 81, 96, 113, 128, 129, 160, 161, 1000, 65535 + 260].map(size), [
    64,
    64,
    80,
    80,
    96,
    96,
    128,
    128,
    160,
    160,
    192,
    1024,
    65536 + 16384,
  ]);
  assert.throws(() => s.alloc(65535 + 513), RangeError);
});

test("blocks given back are reused, and their octets stay apart", () => {
  const s = new Slab();
  const a = s.alloc(100);
  const b = s.alloc(100);
  s.chunk(a).fill(1, s.offset(a), s.offset(a) + 100);
  s.chunk(b).fill(2, s.offset(b), s.offset(b) + 100);
  assert.equal(s.chunk(a)[s.offset(a) + 99], 1);
  s.release(a);
  assert.equal(s.alloc(105), a, "the block given back");
  assert.equal(s.usedBytes, 2 * 112);
});
