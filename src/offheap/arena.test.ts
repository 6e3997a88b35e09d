import { test } from "node:test";
import assert from "node:assert/strict";
import { classBytes, sizeClass } from "./arena.ts";

test("a block's class holds it, 8-byte aligned, with under 8 bytes spare up to 512 and under half above", () => {
  for (let size = 1; size < 300_000; size += size < 2048 ? 1 : 97) {
    const bytes = classBytes(sizeClass(size));
    assert.ok(bytes >= size && bytes % 8 === 0, `${size} -> ${bytes}`);
    assert.ok(size <= 512 ? bytes - size < 8 : bytes < 2 * size, `${size} -> ${bytes}`);
    assert.equal(sizeClass(bytes), sizeClass(size), "a block freed is found again by its own size");
  }
});
