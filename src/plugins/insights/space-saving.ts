// Top-K by the space-saving algorithm (Metwally, Agrawal, El Abbadi 2005), behind a doorkeeper (a
// key takes a slot on its second sighting, see #door): `capacity` slots, each a
// key, a count and the error it may carry. A key already held counts up; a new key takes the slot of
// the smallest count and starts from it, so the list never grows, and any key seen more than
// total/capacity times is certainly in it. A flood of distinct keys only ever takes the smallest
// slot: a key asked often keeps a count above it and stays, and what a flood key shows as certain
// (count - error) stays near zero. Everything lives in typed arrays sized once (a min-heap by count,
// an open-addressing index by hash); counting a key allocates nothing.

/** FNV-1a's offset basis as an int32: V8 keeps the hash a small integer all along. */
const FNV_BASIS = 0x811c9dc5 | 0;

/** The FNV-1a hash of bytes[from..to), as an int32 (a small integer to V8: no heap number). */
export function hashBytes(bytes: Uint8Array, from: number, to: number, seed = FNV_BASIS): number {
  let h = seed;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h | 0;
}

/** The FNV-1a hash of a string's UTF-16 code units, as an int32. */
export function hashText(s: string): number {
  let h = FNV_BASIS;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** One entry of a top list, as read out. */
export interface TopEntry<K> {
  key: K;
  /** What the sketch counted for the key: at most `error` more than its true count. */
  count: number;
  /** How much of `count` it may have inherited from the key whose slot it took. */
  error: number;
}

/** The sketch; a subclass says how a key is compared and kept (the key to count is set on the
 * subclass before `count` is called, so nothing is passed as an object). */
const DOOR_CELLS = 65536;
const DOOR_RESET = 16384;
/** A door cell's mark for a key that was held when its sketch was emptied: let in at once. */
const PASS = 255;
const cellOf = (hash: number) => (hash >>> 16) ^ (hash & 0xffff);

export abstract class SpaceSaving<K> {
  readonly capacity: number;
  protected readonly counts: Float64Array;
  protected readonly errors: Float64Array;
  readonly #hashes: Int32Array;
  /** Slots as a min-heap by count; #pos is each slot's place in it. */
  readonly #heap: Int32Array;
  readonly #pos: Int32Array;
  /** Open addressing, linear probing: slot + 1, 0 when empty. */
  readonly #index: Int32Array;
  readonly #mask: number;
  #used = 0;
  /** The sum of every weight counted. */
  total = 0;
  /** The doorkeeper: sightings of keys not held, by hash. A key not held takes a slot only when seen
   * again while its cell remembers it (and then brings those sightings along), so a stream of names
   * asked once (the over-capacity mix, a flood of random names) costs a probe and a byte each instead
   * of an eviction each. Forgotten every DOOR_RESET misses, so that cells do not fill up. */
  readonly #door: Uint8Array;
  readonly #doorkeeper: boolean;
  #misses = 0;

  /** With `doorkeeper` false every key takes a slot at once (lists whose keys come rarely but heavy,
   * such as a walk's cost). */
  constructor(capacity: number, doorkeeper = true) {
    this.capacity = capacity;
    this.#doorkeeper = doorkeeper;
    this.#door = new Uint8Array(doorkeeper ? DOOR_CELLS : 0);
    this.counts = new Float64Array(capacity);
    this.errors = new Float64Array(capacity);
    this.#hashes = new Int32Array(capacity);
    this.#heap = new Int32Array(capacity);
    this.#pos = new Int32Array(capacity);
    let size = 4;
    while (size < capacity * 2) size *= 2;
    this.#index = new Int32Array(size);
    this.#mask = size - 1;
  }

  /** Whether `slot` holds the key the subclass was given. */
  protected abstract holds(slot: number): boolean;
  /** Puts the key the subclass was given into `slot`. */
  protected abstract keep(slot: number): void;
  /** The key in `slot`, for reading out. */
  protected abstract keyAt(slot: number): K;

  /** Counts the key the subclass was given, whose hash is `hash`, `weight` times. With `error` >= 0 it
   * is another sketch's entry being merged in (a worker thread's): it takes a slot at once, and
   * carries the error it had there. */
  protected countKey(hash: number, weight: number, error = -1): void {
    this.total += weight;
    const index = this.#index;
    const mask = this.#mask;
    let i = hash & mask;
    for (let e = index[i]; e !== 0; e = index[i]) {
      const slot = e - 1;
      if (this.#hashes[slot] === hash && this.holds(slot)) {
        this.counts[slot] += weight;
        if (error > 0) this.errors[slot] += error;
        this.#down(this.#pos[slot]);
        return;
      }
      i = (i + 1) & mask;
    }
    // Not held: remembered by the doorkeeper the first time; admitted with what it remembers.
    const cell = cellOf(hash);
    const seen = this.#doorkeeper ? this.#door[cell] : 0;
    if (seen === 0 && this.#doorkeeper && error < 0) {
      this.#door[cell] = weight >= PASS ? PASS - 1 : weight;
      if (++this.#misses === DOOR_RESET) {
        this.#door.fill(0);
        this.#misses = 0;
      }
      return;
    }
    if (seen !== 0) this.#door[cell] = 0;
    if (seen !== PASS) weight += seen;
    let slot: number;
    const fresh = this.#used < this.capacity;
    if (fresh) {
      slot = this.#used++;
      this.counts[slot] = 0;
      this.errors[slot] = 0;
      this.#heap[slot] = slot;
      this.#pos[slot] = slot;
    } else {
      // The smallest count gives its slot up, and its count becomes the newcomer's error.
      slot = this.#heap[0];
      this.#unindex(slot);
      this.errors[slot] = this.counts[slot];
      i = hash & mask;
      while (index[i] !== 0) i = (i + 1) & mask;
    }
    this.#hashes[slot] = hash;
    this.keep(slot);
    index[i] = slot + 1;
    this.counts[slot] += weight;
    if (error > 0) this.errors[slot] += error;
    if (fresh) this.#up(this.#pos[slot]);
    else this.#down(this.#pos[slot]);
  }

  /** The entries, largest certain count (count - error) first, at most `n`, only those with a
   * certain count above zero. */
  top(n: number): TopEntry<K>[] {
    const slots: number[] = [];
    for (let s = 0; s < this.#used; s++) if (this.counts[s] - this.errors[s] > 0) slots.push(s);
    slots.sort((a, b) => this.counts[b] - this.errors[b] - (this.counts[a] - this.errors[a]));
    return slots
      .slice(0, n)
      .map((s) => ({ key: this.keyAt(s), count: this.counts[s], error: this.errors[s] }));
  }

  /** The slots in use (0..used-1), for a subclass's export. */
  protected get used(): number {
    return this.#used;
  }

  /** Empties the sketch (the next window starts). With `keepDoor` the doorkeeper remembers on (a
   * worker's sketch emptied every second still admits a key seen once in each of two seconds), and
   * lets the keys held now in at once. */
  clear(keepDoor = false): void {
    // Keys held now pass the door at their next sighting: else each would leave one sighting in it
    // after every emptying (a worker's every second), lost when it is not seen again.
    if (keepDoor && this.#doorkeeper)
      for (let s = 0; s < this.#used; s++) this.#door[cellOf(this.#hashes[s])] = PASS;
    this.#index.fill(0);
    this.#used = 0;
    this.total = 0;
    if (keepDoor) return;
    this.#door.fill(0);
    this.#misses = 0;
  }

  /** Every slot's count and error, as copies (what a worker posts). */
  protected exportCounts(): { counts: Float64Array; errors: Float64Array } {
    return { counts: this.counts.slice(0, this.#used), errors: this.errors.slice(0, this.#used) };
  }

  /** Bytes held in typed arrays (the subclass adds its keys'). */
  get bytes(): number {
    return this.capacity * (8 + 8 + 4 + 4 + 4) + this.#index.byteLength + this.#door.byteLength;
  }

  /** Removes `slot` from the index, moving later entries of its probe run back (no tombstones). */
  #unindex(slot: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let i = this.#hashes[slot] & mask;
    while (index[i] !== slot + 1) i = (i + 1) & mask;
    let hole = i;
    for (let j = (i + 1) & mask; index[j] !== 0; j = (j + 1) & mask) {
      const home = this.#hashes[index[j] - 1] & mask;
      // Move j into the hole unless its home lies cyclically in (hole, j].
      const inRun = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!inRun) {
        index[hole] = index[j];
        hole = j;
      }
    }
    index[hole] = 0;
  }

  #less(a: number, b: number): boolean {
    return this.counts[this.#heap[a]] < this.counts[this.#heap[b]];
  }

  #swap(a: number, b: number): void {
    const heap = this.#heap;
    const sa = heap[a];
    heap[a] = heap[b];
    heap[b] = sa;
    this.#pos[heap[a]] = a;
    this.#pos[heap[b]] = b;
  }

  #up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#less(i, p)) return;
      this.#swap(i, p);
      i = p;
    }
  }

  #down(i: number): void {
    const n = this.#used;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const c = r < n && this.#less(r, l) ? r : l;
      if (!this.#less(c, i)) return;
      this.#swap(i, c);
      i = c;
    }
  }
}
