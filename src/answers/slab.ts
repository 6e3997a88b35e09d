// The octets of stored replies, in a few large ArrayBuffers instead of one Buffer or string per reply:
// V8's collector visits every JS object at every full collection, so a cache of 100k replies as
// objects costs marking time forever; these chunks are four dozen objects whatever they hold.
//
// Blocks come in size classes a quarter apart (64, 80, 96, 112, 128, 160, ... octets), so a block
// wastes at most a fifth of itself; each class carves fixed blocks out of chunks of at least 64 KiB
// and keeps a stack of the blocks given back. A block is named by one number, its handle:
// class << 24 | block number.

/** The largest block: a reply of 65535 octets and its key. */
const MAX_BLOCK = 65535 + 512;
const CHUNK = 64 * 1024;

/** Block sizes, ascending: every power of two from 64 and three steps between. */
const SIZES: number[] = [];
for (let p = 64; SIZES.at(-1) === undefined || SIZES.at(-1)! < MAX_BLOCK; p *= 2) {
  for (const f of [4, 5, 6, 7]) SIZES.push((p * f) / 4);
}

/** The size class of a block of n octets, by (n + 15) >> 4: the smallest class that holds it. */
const CLASS_OF = new Uint8Array(((MAX_BLOCK + 15) >> 4) + 1);
for (let i = 0, c = 0; i < CLASS_OF.length; i++) {
  while (SIZES[c] < i << 4) c++;
  CLASS_OF[i] = c;
}

class SizeClass {
  readonly size: number;
  /** Blocks per chunk. */
  readonly per: number;
  readonly chunks: Uint8Array[] = [];
  /** Blocks carved so far (the next fresh one). */
  carved = 0;
  /** Blocks given back, to reuse before carving. */
  free = new Int32Array(64);
  freeCount = 0;

  constructor(size: number) {
    this.size = size;
    this.per = Math.max(1, Math.floor(Math.max(CHUNK, size) / size));
  }
}

export class Slab {
  readonly #classes = SIZES.map((s) => new SizeClass(s));
  /** Octets of chunks allocated (given back only when the store rebuilds its slab: see store.ts). */
  #reserved = 0;
  /** Octets of the blocks handed out. */
  #used = 0;

  /** A block of at least `length` octets; its handle. */
  alloc(length: number): number {
    if (length > MAX_BLOCK) throw new RangeError(`a block of ${length} octets is over ${MAX_BLOCK}`);
    let c = CLASS_OF[(length + 15) >> 4];
    // The table rounds up to 16 octets; the class below may still hold it.
    if (c > 0 && SIZES[c - 1] >= length) c--;
    const cls = this.#classes[c];
    this.#used += cls.size;
    if (cls.freeCount > 0) return (c << 24) | cls.free[--cls.freeCount];
    const block = cls.carved++;
    if (block >= cls.chunks.length * cls.per) {
      cls.chunks.push(new Uint8Array(cls.per * cls.size));
      this.#reserved += cls.per * cls.size;
    }
    return (c << 24) | block;
  }

  /** Gives a block back. */
  release(handle: number): void {
    const cls = this.#classes[handle >>> 24];
    if (cls.freeCount === cls.free.length) {
      const grown = new Int32Array(cls.free.length * 2);
      grown.set(cls.free);
      cls.free = grown;
    }
    cls.free[cls.freeCount++] = handle & 0xffffff;
    this.#used -= cls.size;
  }

  /** The chunk that holds the block; its octets start at offset(handle). */
  chunk(handle: number): Uint8Array {
    const cls = this.#classes[handle >>> 24];
    return cls.chunks[((handle & 0xffffff) / cls.per) | 0];
  }

  offset(handle: number): number {
    const cls = this.#classes[handle >>> 24];
    return ((handle & 0xffffff) % cls.per) * cls.size;
  }

  /** Octets the block can hold. */
  capacity(handle: number): number {
    return this.#classes[handle >>> 24].size;
  }

  get reservedBytes(): number {
    return this.#reserved;
  }

  get usedBytes(): number {
    return this.#used;
  }
}

/** Copies len octets; a loop for the short replies most are (no view object, as subarray() would
 * make), the engine's copy for long ones. */
export function copyBytes(from: Uint8Array, at: number, len: number, to: Uint8Array, toAt: number): void {
  if (len <= 256) {
    for (let i = 0; i < len; i++) to[toAt + i] = from[at + i];
  } else {
    to.set(from.subarray(at, at + len), toAt);
  }
}

/** Zeroed memory of at least `octets` whose pages become resident only when written. A typed array's
 * buffer comes from calloc, which zeroes it by writing when it reuses freed memory: glibc does so for
 * anything below its mmap threshold, which rises as large blocks are freed, up to 32 MiB. A buffer
 * over that is always mapped fresh, and its untouched pages cost nothing: so every buffer here is at
 * least MAPPED octets (address space, not memory). Without it a store's arrays were resident from the
 * start: 30 MB per store, against 85 octets per entry used. */
export function slotMemory(octets: number): ArrayBuffer {
  return new ArrayBuffer(Math.max(octets, MAPPED));
}

const MAPPED = 33 * 1024 * 1024;
