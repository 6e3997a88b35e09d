// The answer store as the pipeline uses it: which stored reply a query may replay and with what TTL
// (fast path), how a reply the plugins produced is filed under its policy (AnswerPolicy, `cache`'s
// KeepTerms), and the entries as the slow path's plugins see them (StoredAnswer). All of `cache`'s
// semantics live here and in store.ts: capacities (a pool per kind per cache), TTL aging, prefetch,
// serve_stale, keepttl, exact invalidation per name.

import {
  AnswerStore,
  DROP_AT,
  Draft,
  EXPIRES,
  FLAG,
  LAST_HIT,
  NO_SLOT,
  STORED,
  type PutOctets,
  type StoreOptions,
} from "./store.ts";
import { rotationOf } from "./replay.ts";
import { WireFacts } from "./wire-facts.ts";
import {
  MAX_CACHE_SECONDS,
  SHUFFLED_REPLAY_SECONDS,
  STABLE_CACHE_SECONDS,
  popularity,
  prefetchDue,
  type AnswerPolicy,
  type CacheCounters,
  type CacheKind,
  type CacheRules,
  type KeepTerms,
  type StoredAnswer,
} from "./policy.ts";
import { answerCacheStats } from "../metrics/server-stats.ts";
import { Rcode } from "../dns/constants.ts";

/** Forwarded replies larger than this (about 1,000 A records) are not kept by `cache`, only replayed for
 * BIG_REPLAY_SECONDS; CoreDNS's cache keeps replies of any size. */
export const BIG_REPLY_OCTETS = 16 * 1024;
export const BIG_REPLAY_SECONDS = 1;

/** What replies of one block with the same rcode and answering plugin share. */
export interface Meta {
  /** What the finish hooks report for a hit. */
  readonly rcode: number;
  /** The plugin that produced the stored reply (metrics label it by that plugin on every hit). */
  readonly plugin: string;
  /** The server block that produced it: its finish hooks run on a hit. */
  readonly owner: unknown;
}

/** replayTtl(): the fast path may not replay the entry (expired, or due for a refresh). */
export const SLOW = -2;
/** replayTtl(): replay the entry's TTLs as stored. */
export const AS_STORED = -1;

/** A reply to file, and what it answers. Reused: file() reads it and keeps nothing. */
export class Filing implements PutOctets {
  policy!: AnswerPolicy;
  owner: unknown = undefined;
  rcode = 0;
  tc = false;
  /** The plugin that answered (Request.answeredBy), "" if none said. */
  plugin = "";
  reply!: Uint8Array;
  replyFrom = 0;
  replyLength = 0;
  /** Offset just past the question in the reply. */
  questionEnd = 0;
  key!: Uint8Array;
  keyFrom = 0;
  keyLength = 0;
  hash = 0;
  generation = 0;
  /** The entry this question had when it reached the chain (its popularity carries over). */
  before: StoredAnswer | undefined = undefined;
}

interface PoolOwner {
  rules: CacheRules;
  kind: CacheKind;
}

export class Answers {
  readonly store: AnswerStore;
  /** A warm-up runs (server/warm-up.ts): the cache counters do not count its queries. */
  quiet = false;
  readonly #metas: Meta[] = [];
  /** owner -> plugin -> rcode -> meta number. */
  readonly #metaIds = new Map<unknown, Map<string, number[]>>();
  /** Counter sets by number; 0 is none. */
  readonly #counters: (CacheCounters | undefined)[] = [undefined];
  readonly #counterIds = new Map<CacheCounters, number>();
  /** Pool numbers of each cache's kinds, and who owns each pool (undefined: pool 0, not kept). */
  readonly #pools = new Map<CacheRules, Record<CacheKind, number>>();
  readonly #poolOwners: (PoolOwner | undefined)[] = [undefined];
  readonly #draft = new Draft();
  readonly #facts = new WireFacts();

  constructor(o: StoreOptions = {}) {
    this.store = new AnswerStore(o);
  }

  get size(): number {
    return this.store.size;
  }

  get generation(): number {
    return this.store.generation;
  }

  /** Now, for lookup() and replayTtl(): set it first (see AnswerStore.clock). */
  get clock(): Float64Array {
    return this.store.clock;
  }

  /** The entry for this key while it may still answer (fresh, or stale within serve_stale) at clock. */
  lookup(key: Uint8Array, from: number, length: number, hash: number): number {
    const before = this.store.size;
    const s = this.store.get(key, from, length, hash);
    if (this.store.size !== before) answerCacheStats.entries += this.store.size - before;
    return s;
  }

  /**
   * The TTL the fast path writes into every record of entry s at clock (AS_STORED: leave them), or SLOW when
   * it must go to the chain: expired, or a kept entry popular enough and close enough to its end to be
   * refreshed (prefetch). Counts the hit towards the entry's popularity.
   */
  replayTtl(s: number): number {
    const store = this.store;
    const now = store.clock[0];
    if (now >= store.expires(s)) return SLOW;
    const owner = this.#poolOwners[store.pool(s)];
    if (owner === undefined) return AS_STORED;
    const ttl = store.ttl(s);
    const left = ttl - Math.floor((now - store.stored(s)) / 1000);
    const p = owner.rules.prefetch;
    if (p !== undefined) {
      const hits = popularity(p, store.hits(s), store.lastHit(s), now);
      store.setHits(s, hits, now);
      if ((store.flags(s) & FLAG.refreshing) === 0 && prefetchDue(p, hits, left, ttl)) return SLOW;
    }
    return owner.rules.keepTtl ? ttl : left;
  }

  /** Counts a replay of entry s: the answer cache's hits, and the cache counters that see it. */
  countHit(s: number): void {
    const store = this.store;
    store.touch(s);
    if (this.quiet) return;
    answerCacheStats.hits++;
    const c = this.#counters[store.counters(s)];
    if (c === undefined) return;
    c.requests++;
    const owner = this.#poolOwners[store.pool(s)];
    if (owner !== undefined) c.hits[owner.kind]++;
    else c.misses++;
  }

  meta(s: number): Meta {
    return this.#metas[this.store.meta(s)];
  }

  /**
   * Stores a reply under its policy, at clock[0], for as long as the policy allows: a kept reply in its cache's
   * pool for that cache's TTL (plus serve_stale), any other for the lowest of its TTLs, the policy's
   * bound, and an hour (a minute for a stable one). Returns its slot, or NO_SLOT.
   */
  file(f: Filing): number {
    const policy = f.policy;
    if (policy.private || f.tc) return NO_SLOT;
    // A forwarded reply over BIG_REPLY_OCTETS is never kept by `cache`: replayed for a second (the
    // client's retry over TCP after a truncated UDP reply), in a sixteenth of the store's octets at
    // most, so that a client asking unique names with huge answers cannot fill the store with them,
    // push everyone's answers out, nor hold the process's memory up with replies asked once.
    const big = policy.outside && f.replyLength > BIG_REPLY_OCTETS;
    const kept = big ? undefined : policy.kept;
    if (kept === undefined && f.rcode !== Rcode.NOERROR && f.rcode !== Rcode.NXDOMAIN) return NO_SLOT;
    const d = this.#draft;
    const t = d.times;
    const now = this.store.clock[0];
    const rotation = policy.rotate ? rotationOf(f.reply, f.questionEnd, f.replyLength, f.replyFrom) : 0;
    // A rotation asked for and not possible: this order is replayed for a short while only.
    const replay = big
      ? Math.min(policy.maxAge, BIG_REPLAY_SECONDS)
      : policy.rotate && rotation === 0
        ? SHUFFLED_REPLAY_SECONDS
        : policy.maxAge;
    d.rotation = rotation;
    // In the store's bounded share for passing replies, let go by the first store after its second.
    d.flags = big ? FLAG.passing : 0;
    d.counters = this.#counterId(policy.countedBy);
    if (kept !== undefined) {
      const end = kept.stored + kept.ttl * 1000;
      t[EXPIRES] = Math.min(end, now + replay * 1000);
      t[DROP_AT] = end + kept.rules.staleMs;
      if (t[DROP_AT] <= now) return NO_SLOT;
      d.pool = this.#poolFor(kept.rules, kept.kind);
      d.ttl = kept.ttl;
      t[STORED] = kept.stored;
      d.hits = 0;
      t[LAST_HIT] = kept.stored;
      if (kept.answers) d.flags |= FLAG.answers;
      // The same kept reply filed again (a new order for loadbalance) keeps its popularity and refresh.
      const before = f.before;
      if (before?.kept === kept) {
        d.hits = before.hits;
        t[LAST_HIT] = before.lastHit;
        if (before.refreshing) d.flags |= FLAG.refreshing;
      }
    } else {
      const said = this.#facts.read(f.reply, f.replyFrom, f.replyLength, f.questionEnd, 0).minTtl;
      const ttl = Math.min(
        replay,
        MAX_CACHE_SECONDS,
        policy.stable ? STABLE_CACHE_SECONDS : said < 0 ? MAX_CACHE_SECONDS : said,
      );
      if (ttl <= 0) return NO_SLOT;
      t[EXPIRES] = t[DROP_AT] = now + ttl * 1000;
      d.pool = 0;
      d.ttl = -1;
      t[STORED] = 0;
      d.hits = 0;
      t[LAST_HIT] = 0;
    }
    // A hit on what `cache` keeps is the cache's answer, as CoreDNS labels it.
    d.meta = this.metaId(f.owner, f.rcode, kept !== undefined ? "cache" : f.plugin);
    return this.#put(f);
  }

  /** The slot as the slow path's plugins see it (AnswerPolicy.stored), or undefined. */
  handle(s: number): StoredAnswer | undefined {
    if (s === NO_SLOT || !this.store.isLive(s)) return undefined;
    return new StoredEntry(this, s);
  }

  /** The KeepTerms of a kept entry (a new object: slow path only). */
  kept(s: number): KeepTerms | undefined {
    const owner = this.#poolOwners[this.store.pool(s)];
    if (owner === undefined) return undefined;
    return {
      rules: owner.rules,
      kind: owner.kind,
      ttl: this.store.ttl(s),
      stored: this.store.stored(s),
      answers: (this.store.flags(s) & FLAG.answers) !== 0,
    };
  }

  invalidate(): void {
    const before = this.store.size;
    this.store.invalidate();
    answerCacheStats.entries += this.store.size - before;
  }

  invalidateNames(names: Iterable<string>): void {
    const before = this.store.size;
    this.store.invalidateNames(names);
    answerCacheStats.entries += this.store.size - before;
  }

  /** Entries a cache holds of a kind in this store. */
  keptCount(rules: CacheRules, kind: CacheKind): number {
    const pools = this.#pools.get(rules);
    return pools === undefined ? 0 : this.store.poolSize(pools[kind]);
  }

  /** The number of what replies of this block, rcode and plugin share. */
  metaId(owner: unknown, rcode: number, plugin: string): number {
    let byPlugin = this.#metaIds.get(owner);
    if (byPlugin === undefined) this.#metaIds.set(owner, (byPlugin = new Map()));
    let byRcode = byPlugin.get(plugin);
    if (byRcode === undefined) byPlugin.set(plugin, (byRcode = []));
    let id = byRcode[rcode];
    if (id === undefined) {
      id = byRcode[rcode] = this.#metas.length;
      this.#metas.push({ rcode, plugin, owner });
    }
    return id;
  }

  /** The draft file() and the lane fill. */
  get draft(): Draft {
    return this.#draft;
  }

  /** Stores the draft's reply; keeps answerCacheStats.entries true. */
  #put(f: Filing): number {
    const before = this.store.size;
    const s = this.store.put(this.#draft, f);
    answerCacheStats.entries += this.store.size - before;
    return s;
  }

  /** Stores the draft as it is (the wire lane fills it itself). */
  putDraft(f: Filing): number {
    return this.#put(f);
  }

  #poolFor(rules: CacheRules, kind: CacheKind): number {
    let pools = this.#pools.get(rules);
    if (pools === undefined) {
      pools = { success: this.#addPool(rules, "success"), denial: this.#addPool(rules, "denial") };
      this.#pools.set(rules, pools);
    }
    return pools[kind];
  }

  // Apart from #poolFor, which every stored answer calls: its closures' context would be allocated on
  // each call, not only on the first.
  #addPool(rules: CacheRules, k: CacheKind): number {
    const id = this.store.addPool(rules.capacity(k), () => rules.evicted(k));
    this.#poolOwners[id] = { rules, kind: k };
    rules.pooled(k, () => this.store.poolSize(id));
    return id;
  }

  /** The pool of a cache's kind (the lane keeps replies there). */
  poolFor(rules: CacheRules, kind: CacheKind): number {
    return this.#poolFor(rules, kind);
  }

  /** Makes a cache's pools now (at set-up): made on first use, they would grow every array of the
   * store while a query waits (tens of ms at the default capacities). */
  reserve(rules: CacheRules): void {
    this.#poolFor(rules, "success");
  }

  #counterId(c: CacheCounters | undefined): number {
    if (c === undefined) return 0;
    let id = this.#counterIds.get(c);
    if (id === undefined) {
      id = this.#counters.length;
      this.#counters.push(c);
      this.#counterIds.set(c, id);
    }
    return id;
  }

  counterId(c: CacheCounters | undefined): number {
    return this.#counterId(c);
  }
}

/** An entry as the slow path sees it: read when the query reached the chain, its reply copied then
 * (the slot may take another reply before the chain is done). Popularity and the refresh flag write
 * through while the slot still holds this reply. */
class StoredEntry implements StoredAnswer {
  readonly #answers: Answers;
  readonly #slot: number;
  readonly #serial: number;
  readonly #reply: Buffer;
  readonly rcode: number;
  readonly expires: number;
  readonly kept: KeepTerms | undefined;
  #hits: number;
  #lastHit: number;
  #refreshing: boolean;

  constructor(answers: Answers, s: number) {
    const store = answers.store;
    this.#answers = answers;
    this.#slot = s;
    this.#serial = store.serial(s);
    this.#reply = store.reply(s);
    this.rcode = answers.meta(s).rcode;
    this.expires = store.expires(s);
    this.kept = answers.kept(s);
    this.#hits = store.hits(s);
    this.#lastHit = store.lastHit(s);
    this.#refreshing = (store.flags(s) & FLAG.refreshing) !== 0;
  }

  reply(): Buffer {
    return Buffer.from(this.#reply);
  }

  get #current(): boolean {
    const store = this.#answers.store;
    return store.isLive(this.#slot) && store.serial(this.#slot) === this.#serial;
  }

  get hits(): number {
    return this.#hits;
  }
  set hits(n: number) {
    this.#hits = n;
    if (this.#current) this.#answers.store.setHits(this.#slot, n, this.#lastHit);
  }
  get lastHit(): number {
    return this.#lastHit;
  }
  set lastHit(t: number) {
    this.#lastHit = t;
    if (this.#current) this.#answers.store.setHits(this.#slot, this.#hits, t);
  }
  get refreshing(): boolean {
    return this.#refreshing;
  }
  set refreshing(on: boolean) {
    this.#refreshing = on;
    if (this.#current) this.#answers.store.setFlag(this.#slot, FLAG.refreshing, on);
  }
}
