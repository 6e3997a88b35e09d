// What plugins say about keeping a reply, and what `cache` must be for the answer store to keep replies
// on its behalf: the contract between the plugins, the pipeline and src/answers/answers.ts.

import type { Msg } from "../dns/message.ts";

/** How long, in seconds, a shuffled reply the answer store cannot rotate (see AnswerPolicy.rotate) may
 * be replayed in one order: the order changes at least this often, while the fast path still answers
 * all but one query per second and name. */
export const SHUFFLED_REPLAY_SECONDS = 1;

/** How long a reply holding records a plugin looked up through the server (a rewritten or a zone's
 * CNAME target's) may be replayed: the lookup's own caching rules do not reach this reply (forwarded
 * TTLs that count down upstream), so one second, as forward's replies. */
export const LOOKED_UP_SECONDS = 1;

/** How long a `stable` reply is replayed: its plugin invalidates it on change, so this bound only
 * limits the damage of an invalidation that a bug would miss. */
export const STABLE_CACHE_SECONDS = 60;

/** Longest a reply may be replayed, whatever its TTLs say. */
export const MAX_CACHE_SECONDS = 3600;

/** The clock of every cache decision, in ms: wall time at start, then monotonic, so that TTLs neither
 * jump nor stall when the system clock is stepped. One read gives the time and a duration's start. */
export const cacheClock = (): number => TIME_ORIGIN + performance.now();
/** performance.timeOrigin, read once: its getter builds a number on every read. */
export const TIME_ORIGIN = performance.timeOrigin;

/** How the answer store may keep one reply. The pipeline makes one per query and reads it once the
 * chain has answered; plugins only ever narrow it. `Req` is the request a refresh fetches with
 * (src/chain/request.ts's Request, which this contract sits below). */
export class AnswerPolicy<Req = unknown> {
  /** Never stored: the reply depends on who asked (whoami, autopath, explain). */
  private = false;
  /** Upper bound, in seconds, on how long the encoded reply may be replayed (forwarded answers, whose
   * TTLs count down upstream; a shuffled reply the store cannot rotate). */
  maxAge = Infinity;
  /** The plugin drops its stored answers itself whenever they could change (kubernetes: every store
   * change invalidates the names it touched): the reply then stays past its TTLs, up to
   * STABLE_CACHE_SECONDS, since an authoritative TTL does not count down. */
  stable = false;
  /** Set by loadbalance when the answer section is only address records of one name and type: the
   * store then replays the reply with those records rotated one place further on every hit, instead
   * of one order for as long as it keeps the reply. A reply asked to rotate that the store finds it
   * cannot is replayed for SHUFFLED_REPLAY_SECONDS at most. */
  rotate = false;
  /** The reply came from outside the server (forward): its size is whatever the names asked for bring,
   * so one over the store's BIG_REPLY_OCTETS is replayed for a second only, never kept by `cache`. */
  outside = false;
  /** Set by `cache` when it keeps the reply: the entry then follows the cache's rules (TTLs counting
   * down from `ttl` since `stored`, prefetch, serve_stale) instead of the ones above. */
  kept: KeepTerms | undefined = undefined;
  /** Set by `cache` when the query was in its zones: the counters that count the hits and misses of
   * the stored reply, also when the fast path answers. */
  countedBy: CacheCounters | undefined = undefined;
  /** Set by the server: the store's entry for this question when the fast path could not replay it
   * (expired, stale, due for prefetch, or too big for this client); `cache` answers from it. */
  stored: StoredAnswer | undefined = undefined;
  /** Set by the server for a client's query (not an internal lookup): runs `fetch` in the background
   * on a request of its own for this question (prefetch, stale refresh) and stores the reply it returns
   * as a client's would be: resolves with the new entry, or undefined when nothing was stored. */
  refresh:
    ((fetch: (req: Req) => Promise<Msg | undefined>) => Promise<StoredAnswer | undefined>) | undefined =
    undefined;

  /** Replays for `seconds` at most (only ever lowers the bound). */
  limit(seconds: number): void {
    if (seconds < this.maxAge) this.maxAge = seconds;
  }
}

export type CacheKind = "success" | "denial";

/** The terms on which `cache` keeps a reply: whose rules, as what kind, for how long from when. */
export interface KeepTerms {
  readonly rules: CacheRules;
  readonly kind: CacheKind;
  /** The entry's TTL in seconds, and when (cacheClock()) it started counting down. */
  readonly ttl: number;
  readonly stored: number;
  /** The answer section reaches the type asked (through CNAMEs): a last known good answer that
   * serve_stale_policy prefer_positive keeps over a later negative or failed one. */
  readonly answers: boolean;
}

/** A `cache` as the answer store sees it: its rules for the replies it keeps, which the store applies
 * on the fast path and when it refills the cache without the plugin chain (the wire lane). */
export interface CacheRules {
  /** Answer with the entry's whole TTL instead of the time left (keepttl). */
  readonly keepTtl: boolean;
  /** How long past its TTL an entry may still answer (serve_stale), ms; 0 without. */
  readonly staleMs: number;
  readonly prefetch: PrefetchRule | undefined;
  /** Entries of a kind it keeps at most (in each listener's store). */
  capacity(kind: CacheKind): number;
  /** A store made it a pool for `kind`; count() tells how many entries that pool holds. */
  pooled(kind: CacheKind, count: () => number): void;
  /** One of its entries of `kind` was dropped to make room. */
  evicted(kind: CacheKind): void;
  /** Its counters for a query of `server` for `qname`, or undefined when qname is not in its zones. */
  counters(server: string, qname: string): CacheCounters | undefined;
  /** How many seconds it keeps a reply to `qname` of `kind` and `rcode` whose records say `said`
   * seconds (undefined: nothing says); 0 when it does not keep it. */
  ttlFor(qname: string, kind: CacheKind, rcode: number, said: number | undefined): number;
}

export interface PrefetchRule {
  /** Hits with no gap of durationMs or more between them make an entry popular. */
  readonly amount: number;
  readonly durationMs: number;
  /** Refresh once the time left is down to this share of the TTL (or the last second). */
  readonly percentage: number;
}

/** Counters `cache` keeps per server: the fast path bumps them too. */
export interface CacheCounters {
  requests: number;
  hits: Record<CacheKind, number>;
  misses: number;
  prefetch: number;
}

/** An entry of the answer store as a plugin sees it on the slow path: the encoded reply and the
 * cache's state, read when the query reached the chain. */
export interface StoredAnswer {
  /** The stored reply, encoded (a new Buffer on every call). */
  reply(): Buffer;
  readonly rcode: number;
  /** cacheClock() until which the fast path replays it. */
  readonly expires: number;
  readonly kept: KeepTerms | undefined;
  /** Prefetch popularity: hits with no gap of the prefetch DURATION, and the last hit (cacheClock()). */
  hits: number;
  lastHit: number;
  /** A background refresh of this entry is under way. */
  refreshing: boolean;
}

/** An entry's popularity after a hit at `now` (cacheClock() ms), the one count both the fast path
 * (answers.ts, on the store's slots) and `cache` (on a StoredAnswer) keep: hits with no gap of the
 * prefetch DURATION between them, starting again at 1 after a longer gap. */
export function popularity(p: PrefetchRule, hits: number, lastHit: number, now: number): number {
  return now - lastHit >= p.durationMs ? 1 : hits + 1;
}

/** CoreDNS's prefetch rule, on an entry with `left` seconds of `ttl` to go that was hit `hits` times
 * in a row (popularity()): due when popular and down to its PERCENTAGE of the TTL, or to its last
 * second. */
export function prefetchDue(p: PrefetchRule, hits: number, left: number, ttl: number): boolean {
  return hits >= p.amount && left <= Math.max(1, Math.ceil((ttl * p.percentage) / 100));
}
