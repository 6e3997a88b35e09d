// What each client (source address) has cost the server lately, so that one whose queries are expensive
// (unique names with answers of thousands of records: issue 33) waits, while the others do not.
//
// A query's cost is estimated where it is known, from what it made the server handle, not timed: a
// reply that took the plugin chain costs a fixed part plus its octets (received, walked, filed, fitted:
// 4,000 A records, 64 KB, cost the server about 5 ms, bench/big-forward.ts), and a replay from the answer
// store too large for UDP costs its octets' copy. Timings would charge a client for the machine's load
// and for whatever else ran in its turn; octets are what its own questions brought.
//
// Each client has a bucket of credit in microseconds of CPU, refilled at its share per second up to one
// second's worth: a query past its credit waits until the credit is back (deferred, at most MAX_WAIT_MS;
// beyond that, or with MAX_DEFERRED queries already waiting, it is answered REFUSED). The buckets live in
// a small table of typed arrays indexed by a hash of the address (no allocation per query); two clients
// that hash alike share a bucket, and a bucket idle long enough to be full is taken by a new address.
//
// Shares are enforced only while the event loop is busy (over BUSY_UTILIZATION of the last sample):
// an idle server has CPU for everyone, and a client that legitimately asks much (a node's forwarder, a
// crawler, dnsperf) must not be slowed for nothing. Costs are charged all the time, so a client already
// past its share waits from the first busy moment on.

import { clientCostStats } from "../metrics/server-stats.ts";

/** A query that took the plugin chain costs this much (us) besides its octets. */
const CHAIN_US = 50;
/** Microseconds per octet of a reply that took the chain, and of a replay. */
const CHAIN_US_PER_OCTET = 1 / 16;
const REPLAY_US_PER_OCTET = 1 / 64;
/** Event loop utilization over which the server counts as busy, and how often it is sampled (ms). */
const BUSY_UTILIZATION = 0.8;
const SAMPLE_MS = 250;

export interface ClientCostOptions {
  /** Microseconds of CPU per second a client may cost before its queries wait; 0 turns limiting off. */
  shareUs?: number;
  /** Buckets in the table (a power of two). */
  slots?: number;
  /** Longest a query is deferred; a longer wait is REFUSED. */
  maxWaitMs?: number;
  /** Queries deferred at once, at most; past it a query that would wait is REFUSED. */
  maxDeferred?: number;
  /** Enforce shares even when the event loop is not busy (tests). */
  always?: boolean;
}

export const CLIENT_COST_DEFAULTS = {
  /** A tenth of a core: about 20 names a second whose answers are 64 KB, or 1,200 forwarded misses of
   * ordinary size; one client's expensive queries leave the rest of the process to the others. */
  shareUs: 100_000,
  slots: 1024,
  maxWaitMs: 1000,
  maxDeferred: 1024,
} as const;

/** What a client's query must do now: go on, wait this many ms (> 0), or be refused (-1). */
export const REFUSE = -1;

export class ClientCosts {
  readonly shareUs: number;
  readonly #mask: number;
  readonly #maxWaitMs: number;
  readonly #maxDeferred: number;
  /** Per bucket: the address hash that owns it, its credit (us) and when it was last refilled (ms). */
  readonly #tag: Int32Array;
  readonly #credit: Float64Array;
  readonly #at: Float64Array;
  readonly #always: boolean;
  /** Whether the event loop was busy at the last sample, when that was, and its utilization then. */
  #busy = false;
  #sampledAt = 0;
  #elu = performance.eventLoopUtilization();
  /** Queries waiting now. */
  deferred = 0;

  constructor(o: ClientCostOptions = {}) {
    this.shareUs = o.shareUs ?? CLIENT_COST_DEFAULTS.shareUs;
    const slots = o.slots ?? CLIENT_COST_DEFAULTS.slots;
    if ((slots & (slots - 1)) !== 0) throw new Error(`client cost slots: ${slots} is not a power of two`);
    this.#mask = slots - 1;
    this.#maxWaitMs = o.maxWaitMs ?? CLIENT_COST_DEFAULTS.maxWaitMs;
    this.#maxDeferred = o.maxDeferred ?? CLIENT_COST_DEFAULTS.maxDeferred;
    this.#always = o.always ?? false;
    this.#tag = new Int32Array(slots);
    this.#credit = new Float64Array(slots).fill(this.shareUs);
    this.#at = new Float64Array(slots);
  }

  /** What a query of `address` that takes the chain must do at `now` (ms): 0, a wait in ms, or REFUSE. */
  admit(address: string, now: number): number {
    if (this.shareUs === 0 || !this.#pressed(now)) return 0;
    const b = this.#bucket(address, now);
    const credit = this.#credit[b];
    if (credit >= 0) return 0;
    const waitMs = (-credit / this.shareUs) * 1000;
    if (waitMs > this.#maxWaitMs || this.deferred >= this.#maxDeferred) {
      clientCostStats.refused++;
      return REFUSE;
    }
    clientCostStats.deferred++;
    return Math.ceil(waitMs);
  }

  /** Charges a reply that took the chain, of `octets` (before it was fitted to the client). */
  chargeChain(address: string, octets: number, now: number): void {
    if (this.shareUs !== 0)
      this.#credit[this.#bucket(address, now)] -= CHAIN_US + octets * CHAIN_US_PER_OCTET;
  }

  /** Charges a replay of `octets` from the answer store (the caller charges only large ones). */
  chargeReplay(address: string, octets: number, now: number): void {
    if (this.shareUs !== 0) this.#credit[this.#bucket(address, now)] -= octets * REPLAY_US_PER_OCTET;
  }

  /** The credit of `address`'s bucket now, in us (tests, metrics). */
  credit(address: string, now: number): number {
    return this.#credit[this.#bucket(address, now)];
  }

  /** Whether shares apply now: always, or while the event loop was busy over the last sample. */
  #pressed(now: number): boolean {
    if (this.#always) return true;
    if (now - this.#sampledAt >= SAMPLE_MS) {
      const elu = performance.eventLoopUtilization();
      this.#busy = performance.eventLoopUtilization(elu, this.#elu).utilization > BUSY_UTILIZATION;
      this.#elu = elu;
      this.#sampledAt = now;
    }
    return this.#busy;
  }

  /** The bucket of `address`, refilled up to `now`: its own, or one it shares, or a full one it takes. */
  #bucket(address: string, now: number): number {
    const h = hashText(address);
    const b = h & this.#mask;
    const full = this.shareUs;
    const credit = Math.min(full, this.#credit[b] + ((now - this.#at[b]) / 1000) * full);
    this.#at[b] = now;
    // A bucket that refilled is as good as new: a new address takes it over.
    this.#credit[b] = this.#tag[b] !== h && credit >= full ? full : credit;
    this.#tag[b] = h;
    return b;
  }
}

/** FNV-1a over the address's characters, without a string or array made. */
function hashText(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}
