// The memory of a shared index: one growable SharedArrayBuffer, a header of control words, and blocks
// handed out by one writer thread. Readers (worker threads) never allocate; they only read blocks the
// writer published. A block the writer unlinks is not reused while a reader that might still reach it
// reads: epoch-based reclamation. Each reader announces the epoch it began at in a slot of its own;
// the writer ends every write section by advancing the epoch, and reuses a freed block only once no
// reader announced an epoch at or before the one it was freed in. So a reader never sees a block change
// under it, and needs no bounds check against torn data; the sequence word (SEQ) then tells it whether
// the writer changed anything while it read (shared-index.ts retries then, for a consistent view).

/** Word offsets of the header (Int32). */
export const H = {
  MAGIC: 0,
  /** Odd while the writer is inside a write section; advances by two per section. */
  SEQ: 1,
  /** Advances at the end of each write section; starts at 1 (0 marks an idle reader slot). */
  EPOCH: 2,
  /** The first byte never handed out. */
  TOP: 3,
  /** Bytes in blocks in use (a statistic). */
  LIVE: 4,
  /** Readers the writer keeps overtaking, asking it to pause before its next write section. */
  WAITING: 5,
  /** One past the highest reader slot ever taken: how far the writer looks. */
  READER_HIGH: 6,
  /** Reader slots: the epoch each reader began at, 0 when idle. */
  READERS: 8,
  /** Table roots: [name hash, slot array offset, size, 0] each. */
  ROOTS: 8 + 1024,
} as const;

/** As many as -workers allows. */
export const MAX_READERS = 1024;
export const MAX_TABLES = 32;
const HEADER_BYTES = (H.ROOTS + MAX_TABLES * 4) * 4;
const FIRST_BLOCK = 8192;
const MAGIC = 0x6b696478;

export interface ArenaOptions {
  /** Bytes to start with. */
  initial?: number;
  /** Bytes the index may grow to (reserved address space, not memory). */
  max?: number;
}

/** What a reader thread needs to open the writer's arena: the buffer (shared by postMessage). */
export interface ArenaHandle {
  readonly sab: SharedArrayBuffer;
}

/** Views of the arena that any thread holds. They are fixed-length views, made again when the buffer
 * grew (refresh): a length-tracking view of a growable buffer reads about 25 times slower in V8
 * (2.3 s against 0.08-0.13 s for 50M reads, Node 24). The buffer's memory does not move when it grows,
 * so an old view stays right for the bytes it covers. */
export class ArenaView {
  readonly sab: SharedArrayBuffer;
  words: Int32Array;
  bytes: Buffer;

  constructor(sab: SharedArrayBuffer) {
    this.sab = sab;
    this.words = new Int32Array(sab, 0, sab.byteLength >> 2);
    this.bytes = Buffer.from(sab, 0, sab.byteLength);
    if (this.words[H.MAGIC] !== MAGIC && this.words[H.TOP] !== 0) throw new Error("not a shared index");
  }

  /** New views when the buffer grew since they were made; true then. */
  refresh(): boolean {
    const n = this.sab.byteLength;
    if (n === this.bytes.length) return false;
    this.words = new Int32Array(this.sab, 0, n >> 2);
    this.bytes = Buffer.from(this.sab, 0, n);
    return true;
  }

  /** The buffer grew past these views. */
  get stale(): boolean {
    return this.sab.byteLength !== this.bytes.length;
  }
}

/** The writer's side: allocation, and the blocks waiting for readers to move past them. */
export class Arena extends ArenaView {
  readonly #max: number;
  /** Free blocks by size class (log2 of the size). Only the writer allocates, so these live here. */
  readonly #free: number[][] = [];
  /** Unlinked blocks, oldest first: [offset, class, epoch freed in]. */
  #limbo: number[] = [];
  #limboHead = 0;

  constructor(o: ArenaOptions = {}) {
    const max = o.max ?? 1 << 30;
    const initial = Math.max(FIRST_BLOCK * 4, Math.min(o.initial ?? 1 << 20, max));
    super(new SharedArrayBuffer(initial, { maxByteLength: max }));
    this.#max = max;
    if (HEADER_BYTES > FIRST_BLOCK) throw new Error("arena header too large");
    this.words[H.MAGIC] = MAGIC;
    this.words[H.EPOCH] = 1;
    this.words[H.TOP] = FIRST_BLOCK;
  }

  get handle(): ArenaHandle {
    return { sab: this.sab };
  }

  /** Bytes taken from the buffer so far, and in blocks in use. */
  get used(): { top: number; live: number } {
    return { top: this.words[H.TOP], live: this.words[H.LIVE] };
  }

  /** A block of at least `size` bytes (8-byte aligned); its contents are unspecified. */
  alloc(size: number): number {
    const c = sizeClass(size);
    const bytes = classBytes(c);
    this.words[H.LIVE] += bytes;
    const free = this.#free[c];
    if (free !== undefined && free.length > 0) return free.pop()!;
    const at = this.words[H.TOP];
    const end = at + bytes;
    if (end > this.sab.byteLength) this.#grow(end);
    this.words[H.TOP] = end;
    return at;
  }

  /** Unlinks the block at `at` of `size` bytes: reused once every reader has moved past this epoch. */
  release(at: number, size: number): void {
    const c = sizeClass(size);
    this.words[H.LIVE] -= classBytes(c);
    this.#limbo.push(at, c, Atomics.load(this.words, H.EPOCH));
  }

  /** Moves to the free lists the blocks no reader can still reach: those freed before the oldest epoch
   * a reader announced (all of them when none reads). */
  reclaim(): void {
    let oldest = Infinity;
    const high = Atomics.load(this.words, H.READER_HIGH);
    for (let i = 0; i < high; i++) {
      const e = Atomics.load(this.words, H.READERS + i);
      if (e !== 0 && e < oldest) oldest = e;
    }
    const limbo = this.#limbo;
    let i = this.#limboHead;
    for (; i < limbo.length && limbo[i + 2] < oldest; i += 3)
      (this.#free[limbo[i + 1]] ??= []).push(limbo[i]);
    if (i === limbo.length) {
      this.#limbo = [];
      this.#limboHead = 0;
    } else if (i > 4096 && i * 2 > limbo.length) {
      this.#limbo = limbo.slice(i);
      this.#limboHead = 0;
    } else this.#limboHead = i;
  }

  /** Frees a reader slot whose thread is gone (it died inside a read). */
  clearReader(slot: number): void {
    Atomics.store(this.words, H.READERS + slot, 0);
  }

  #grow(end: number): void {
    const next = Math.min(this.#max, Math.max(end, this.sab.byteLength * 2));
    if (end > next) {
      throw new Error(
        `shared index full: ${this.#max >> 20} MiB reserved and used; raise the kubernetes index's size`,
      );
    }
    this.sab.grow(next);
    this.refresh();
  }
}

/** The size class of a block of `size` bytes. Most entries are small (a service, a slice of a few
 * endpoints, an address's service keys: 24 to 200 bytes), where rounding up to a power of two wasted a
 * quarter of the arena: up to SMALL bytes the classes are GRAIN bytes apart, above it powers of two. */
export function sizeClass(size: number): number {
  if (size <= SMALL) return Math.max(1, Math.ceil(size / GRAIN));
  return SMALL / GRAIN + (32 - Math.clz32(size - 1)) - SMALL_LOG2;
}

/** The bytes of a block of class `c`. */
export function classBytes(c: number): number {
  return c <= SMALL / GRAIN ? c * GRAIN : 2 ** (c - SMALL / GRAIN + SMALL_LOG2);
}

const GRAIN = 8;
const SMALL = 512;
const SMALL_LOG2 = 9;
