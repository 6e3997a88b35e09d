// Which computed NXDOMAIN answers the wire lane files: those whose question was asked before. A name
// asked once (a random subdomain, the bulk of what no cache absorbs, and all NXDOMAIN) is answered from
// the encoder's scratch and never filed, so it costs no store insertion, no eviction and no copy, and
// does not push out of `cache`'s pools (or pool 0's sources) the answers that are asked again. The
// second asking files the reply as before, and the third is a replay. Answers that exist are filed at
// once: a cluster's working set larger than `cache` holds is refilled from their sources (lane.ts),
// which a first asking left unfiled would not have. TinyLFU's doorkeeper does the same in front of
// its cache: a Bloom filter of the keys seen, cleared once it has taken so many that it would say yes
// to most.
//
// Two bits of a 2^20-bit table per key, from its 32-bit hash. A key not seen is taken for seen (and
// filed) when both its bits were set by others: about 1 in 20 at the fullest, harmless. A key seen is
// never taken for unseen until the table is cleared, after RESET_AFTER keys: under a flood of unique
// names at 100k a second that is about every 1.3 s, so a question asked twice within that is filed.

const BITS = 1 << 20;
const MASK = BITS - 1;
/** Keys marked before the table is cleared: each sets at most 2 bits, so at most a quarter are set. */
const RESET_AFTER = BITS / 8;

export class Doorkeeper {
  readonly #bits = new Uint32Array(BITS / 32);
  #marked = 0;

  /** True when the key of hash `hash` was seen since the last clearing; marks it seen. */
  admits(hash: number): boolean {
    const a = hash & MASK;
    // A second index from the hash's other bits, mixed so keys that share their low bits part.
    const b = Math.imul(hash ^ (hash >>> 16), 0x45d9f3b) >>> 12;
    const bits = this.#bits;
    const wa = a >>> 5;
    const wb = b >>> 5;
    const ma = 1 << (a & 31);
    const mb = 1 << (b & 31);
    if ((bits[wa] & ma) !== 0 && (bits[wb] & mb) !== 0) return true;
    if (++this.#marked > RESET_AFTER) {
      bits.fill(0);
      this.#marked = 1;
    }
    bits[wa] |= ma;
    bits[wb] |= mb;
    return false;
  }
}
