// The response-rate accounts of one rrl block, in one buffer every answering thread updates
// (-workers N: the kernel spreads a client's source ports over the threads' sockets, so accounts of
// their own would give it N times the allowance). A fixed number of slots (max-table-size), found by
// the account's 64-bit hash within a short run of slots from its home; an account not there takes an
// empty slot of the run, else the one with the most credit (the one idle longest), as the table of
// BIND's rrl recycles its oldest entries. Two accounts whose hashes agree in all 64 bits share one.
//
// A slot holds the account as its theoretical arrival time (GCRA): the moment its balance would be
// back to zero. That is the account's whole state in one number: a response at `now` moves it on by
// one response's cost (1/rate s) from max(it, now - 1 s), capped at now + window; the response is
// within the allowance when it stays at or before `now`. It is BIND's balance (rate credits a second,
// one second's worth at most, debt down to `window` seconds' worth) read the other way round.
//
// Each slot has a lock word taken with one compare-and-swap for the few loads and stores of a charge:
// a float64 cannot be swapped atomically, and the time is a float64 (ms, a fraction of one per
// response at high rates). A key is written only under a table-wide insert lock, so a thread looking
// an account up never takes that one; inserting takes it, then the victim slot's lock (always in that
// order). A lock held far too long (its thread killed inside the few instructions it guards) is
// taken over: a charge may be lost then, never a thread stuck.

/** Header words: [slots, accounts held, insert lock, 0...], 32 octets (keeps the floats aligned). */
const HEADER_WORDS = 8;
const SLOTS = 0;
const HELD = 1;
const INSERT_LOCK = 2;
/** A slot: [lock, hash a, hash b (0: empty), limited responses, time (float64)], 24 octets. */
const SLOT_WORDS = 6;
/** Slots an account may sit in, from its home slot on. */
const RUN = 8;
/** Spins before a lock waiter starts sleeping 1 ms at a time, and sleeps before it takes over. */
const SPINS = 1000;
const NAPS = 200;

export class AccountTable {
  /** Shared with the other threads (postMessage shares it, never copies it). */
  readonly buffer: SharedArrayBuffer;
  readonly #words: Int32Array;
  readonly #times: Float64Array;
  readonly #slots: number;
  readonly #run: number;

  /** The table in `buffer` (made by create, here or in another thread). */
  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#words = new Int32Array(buffer);
    this.#times = new Float64Array(buffer);
    this.#slots = this.#words[SLOTS];
    this.#run = Math.min(RUN, this.#slots);
  }

  /** An empty table of `slots` accounts. */
  static create(slots: number): AccountTable {
    const buffer = new SharedArrayBuffer(4 * (HEADER_WORDS + SLOT_WORDS * slots));
    new Int32Array(buffer)[SLOTS] = slots;
    return new AccountTable(buffer);
  }

  /** Accounts held, at most the slots. */
  get held(): number {
    return Atomics.load(this.#words, HELD);
  }

  /** Charges one response of cost `costMs` (1000 / rate) at `now` (ms) to the account hashed (a, b),
   * whose debt stops at `windowMs`: 0 when it is within the allowance, else how many of the
   * account's responses have been over it so far (this one counted). */
  charge(a: number, b: number, costMs: number, windowMs: number, now: number): number {
    b |= 1;
    let s = this.#find(a, b);
    if (s >= 0) {
      this.#lock(word(s));
      // Evicted between the look and the lock: inserted again.
      if (!this.#holds(s, a, b)) {
        this.#unlock(word(s));
        s = -1;
      }
    }
    if (s < 0) s = this.#insert(a, b);
    const w = word(s);
    const t = time(s);
    const earliest = now - 1000;
    const was = this.#times[t];
    let next = (was > earliest ? was : earliest) + costMs;
    if (next > now + windowMs) next = now + windowMs;
    this.#times[t] = next;
    const limited = next > now ? ++this.#words[w + 3] : 0;
    this.#unlock(w);
    return limited;
  }

  /** The slot of the account in its run, or -1. */
  #find(a: number, b: number): number {
    const words = this.#words;
    for (let i = 0, s = this.#home(a); i < this.#run; i++, s = s + 1 === this.#slots ? 0 : s + 1) {
      const w = word(s);
      if (Atomics.load(words, w + 2) === b && Atomics.load(words, w + 1) === a) return s;
    }
    return -1;
  }

  #holds(s: number, a: number, b: number): boolean {
    const w = word(s);
    return this.#words[w + 1] === a && this.#words[w + 2] === b;
  }

  #home(a: number): number {
    return (a >>> 0) % this.#slots;
  }

  /** Under the insert lock: the account's slot if another thread put it there meanwhile, else a new
   * account in the run's empty slot or in place of its account with the most credit. Returns the slot
   * locked. */
  #insert(a: number, b: number): number {
    const words = this.#words;
    this.#lock(INSERT_LOCK);
    let s = this.#find(a, b);
    if (s >= 0) this.#lock(word(s));
    else {
      s = this.#victim(a);
      const w = word(s);
      this.#lock(w);
      if (words[w + 2] === 0) Atomics.add(words, HELD, 1);
      this.#times[time(s)] = -Infinity;
      words[w + 3] = 0;
      Atomics.store(words, w + 1, a);
      Atomics.store(words, w + 2, b);
    }
    this.#unlock(INSERT_LOCK);
    return s;
  }

  /** The run's first empty slot, else the one whose time is earliest (the most credit). */
  #victim(a: number): number {
    let best = -1;
    let earliest = Infinity;
    for (let i = 0, s = this.#home(a); i < this.#run; i++, s = s + 1 === this.#slots ? 0 : s + 1) {
      if (Atomics.load(this.#words, word(s) + 2) === 0) return s;
      const t = this.#times[time(s)];
      if (best < 0 || t < earliest) {
        best = s;
        earliest = t;
      }
    }
    return best;
  }

  #lock(w: number): void {
    const words = this.#words;
    if (Atomics.compareExchange(words, w, 0, 1) === 0) return;
    for (let i = 0; i < SPINS; i++) if (Atomics.compareExchange(words, w, 0, 1) === 0) return;
    for (let i = 0; i < NAPS; i++) {
      Atomics.wait(words, w, 1, 1);
      if (Atomics.compareExchange(words, w, 0, 1) === 0) return;
    }
    // Held for NAPS ms: its holder is gone (see the top). Taken over as it is.
  }

  #unlock(w: number): void {
    Atomics.store(this.#words, w, 0);
  }
}

/** The word of slot `s`'s lock. */
function word(s: number): number {
  return HEADER_WORDS + SLOT_WORDS * s;
}

/** The float64 index of slot `s`'s time. */
function time(s: number): number {
  return (HEADER_WORDS + SLOT_WORDS * s + 4) / 2;
}
