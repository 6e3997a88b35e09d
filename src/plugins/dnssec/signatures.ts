// The signatures of RRsets, made once and kept: a cache of up to `capacity` RRsets (CoreDNS's default
// 10,000), least recently used out first. An entry is keyed by the RRset's canonical octets (owner,
// type, class, TTL and every rdata), so a changed record is a new entry and an old one ages out. As in
// CoreDNS, a signature is made valid from 3 hours back to 8 days on, and made again once less than
// 2 days of that are left.
//
// A Map of JS objects rather than typed arrays (src/answers/store.ts): at 10,000 entries of a few
// hundred octets it is a few MB the collector visits, the size of CoreDNS's own cache; the answer
// store in front keeps the signed replies themselves.

import type { RR } from "../../dns/message.ts";
import { canonicalRRset } from "../../dnssec/canonical.ts";
import { signCanonical, type Validity } from "../../dnssec/rrsig.ts";
import type { SigningKey } from "../../dnssec/keys.ts";
import { cacheHit, cacheMiss } from "./metrics.ts";

export const DEFAULT_CAPACITY = 10_000;
const HOUR = 3600;
const DAY = 24 * HOUR;
/** Signatures start this far back, for resolvers whose clocks are behind. */
const BACKDATE = 3 * HOUR;
const LIFETIME = 8 * DAY;
/** A signature with less than this left is made again. */
const RENEW_BEFORE = 2 * DAY;

interface Entry {
  sigs: RR[];
  expiration: number;
}

export class Signatures {
  readonly #entries = new Map<string, Entry>();
  readonly #capacity: number;
  readonly #now: () => number;

  /** `now` gives seconds since the epoch (injected for tests). */
  constructor(capacity: number, now: () => number = () => Math.floor(Date.now() / 1000)) {
    this.#capacity = capacity;
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The RRSIGs of `rrs` by each of `keys`, for zone `signer`. */
  of(rrs: readonly RR[], keys: readonly SigningKey[], signer: string, server: string): RR[] {
    const ttl = Math.min(...rrs.map((r) => r.ttl));
    const covered = canonicalRRset(rrs, ttl);
    const key = `${signer} ${covered.toString("latin1")}`;
    const now = this.#now();
    const hit = this.#entries.get(key);
    if (hit !== undefined) {
      this.#entries.delete(key);
      if (hit.expiration - now >= RENEW_BEFORE) {
        this.#entries.set(key, hit);
        cacheHit(server);
        return hit.sigs;
      }
    }
    cacheMiss(server);
    const v: Validity = { inception: now - BACKDATE, expiration: now + LIFETIME };
    const sigs = keys.map((k) => signCanonical({ rrs, ttl, covered, key: k, signer, validity: v }));
    if (this.#entries.size >= this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    if (this.#capacity > 0) this.#entries.set(key, { sigs, expiration: v.expiration });
    return sigs;
  }
}
