// cache: keeps replies of the plugins after it (kubernetes, forward, file, ...) for their TTL, as
// successes and denials, and answers from them with the time left as TTL. With prefetch a popular entry
// is refreshed before it expires; with serve_stale an expired entry still answers while its refresh (or
// the upstream) is away.
//
// The entries live in the server's answer store (src/answers/): encoded replies that the fast path
// replays, writing the time left into every TTL field on the way out, in a pool per kind whose size is
// this cache's capacity. This plugin is the rules (the CacheRules contract): what is kept and for how long
// (AnswerPolicy.kept here on the slow path, CacheRules.ttlFor in the wire lane), and it answers on the slow
// path from an entry the fast path could not use (AnswerPolicy.stored: stale, or due for a refresh).
// Holding decoded messages instead cost 21 us per query against 13 for the plain fast path (kubeadm's
// Corefile at 10k services), and their garbage put the p99 at 31 ms; an lru-cache index of the entries
// (a JS object per entry, and its bookkeeping on every miss) made a miss past the capacity cost as
// much as the plugins behind it, so the store's typed arrays bound each kind instead.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import { isFailureRcode } from "../../chain/handler.ts";
import {
  cacheClock,
  popularity,
  prefetchDue,
  type CacheKind,
  type CacheRules,
  type KeepTerms,
  type PrefetchRule,
  type StoredAnswer,
} from "../../answers/policy.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { decode } from "../../dns/decode.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { WireFacts, answersQuestion } from "../../answers/wire-facts.ts";
import { setTtls } from "../../dns/wire-ttl.ts";
import { wireRecords } from "../../dns/wire-msg.ts";
import { liveCaches, statsFor, type CacheStats, type LiveCache } from "./stats.ts";

export interface KindSettings {
  capacity: number;
  /** Longest and shortest time an entry is kept, in seconds. */
  maxTtl: number;
  minTtl: number;
}

export interface CacheOptions {
  zones: readonly string[];
  success: KindSettings;
  denial: KindSettings;
  prefetch?: PrefetchRule;
  /** serve_stale; `preferPositive` is serve_stale_policy prefer_positive (CoreDNS 1.14.7). */
  serveStale?: { durationMs: number; verify: boolean; preferPositive?: boolean };
  /** How long SERVFAIL replies are kept, in seconds; 0 keeps none. */
  servfailTtl: number;
  disable: { success: readonly string[]; denial: readonly string[] };
  keepTtl: boolean;
  now?: () => number;
}

export class Cache implements CacheRules {
  readonly keepTtl: boolean;
  readonly staleMs: number;
  readonly prefetch: PrefetchRule | undefined;
  readonly #options: CacheOptions;
  readonly #now: () => number;
  /** How many entries of each kind the stores hold for it (one pool per listener's store). */
  readonly #pools: Record<CacheKind, (() => number)[]> = { success: [], denial: [] };
  readonly #live: LiveCache;
  /** The counters of #live.server (a lookup by a built string otherwise). */
  #stats: CacheStats | undefined;
  readonly #facts = new WireFacts();

  constructor(o: CacheOptions) {
    this.#options = o;
    this.#now = o.now ?? cacheClock;
    this.keepTtl = o.keepTtl;
    this.staleMs = o.serveStale?.durationMs ?? 0;
    this.prefetch = o.prefetch;
    const size = (kind: CacheKind) => this.#pools[kind].reduce((n, count) => n + count(), 0);
    // Counted under the plugin's zones, joined: "." for `cache 30` in the kubeadm Corefile.
    this.#live = { server: undefined, zones: o.zones.join(" "), size };
  }

  /** Shows this cache's entries in coredns_cache_entries until stop(). */
  start(): void {
    liveCaches.add(this.#live);
  }

  /** Leaves the metrics: its entries stay in the answer store until they expire or are replaced, and
   * a reload's new instance starts with stores of its own. */
  stop(): void {
    liveCaches.delete(this.#live);
  }

  capacity(kind: CacheKind): number {
    return this.#options[kind].capacity;
  }

  pooled(kind: CacheKind, count: () => number): void {
    this.#pools[kind].push(count);
  }

  evicted(kind: CacheKind): void {
    if (this.#stats !== undefined) this.#stats.evictions[kind]++;
  }

  counters(server: string, qname: string): CacheStats | undefined {
    if (!this.#applies(qname)) return undefined;
    if (server !== this.#live.server || this.#stats === undefined) {
      this.#live.server = server;
      this.#stats = statsFor(server, this.#live.zones);
    }
    return this.#stats;
  }

  ttlFor(qname: string, kind: CacheKind, rcode: number, said: number | undefined): number {
    if (inZones(qname, this.#options.disable[kind])) return 0;
    if (rcode === Rcode.SERVFAIL) return this.#options.servfailTtl;
    const s = this.#options[kind];
    // MINTTL raises short TTLs, and the maximum has the last word (`cache 3` keeps nothing past 3 s).
    return Math.min(s.maxTtl, Math.max(s.minTtl, said ?? s.minTtl));
  }

  /** CoreDNS's prefetch rule (policy.ts prefetchDue), counting this hit towards the popularity. */
  due(e: StoredAnswer, left: number, now: number): boolean {
    const p = this.prefetch;
    if (p === undefined) return false;
    e.hits = popularity(p, e.hits, e.lastHit, now);
    e.lastHit = now;
    return !e.refreshing && prefetchDue(p, e.hits, left, e.kept!.ttl);
  }

  handler(next: Handler): Handler {
    return {
      name: "cache",
      serve: (req) => this.#serve(req, next),
      lane: { kind: "keep", rules: this },
    };
  }

  #applies(qname: string): boolean {
    return inZones(qname, this.#options.zones);
  }

  async #serve(req: Request, next: Handler): Promise<Msg> {
    const stats =
      req.qtype === Type.AXFR || req.qtype === Type.IXFR ? undefined : this.counters(req.server, req.qname);
    if (stats === undefined) return next.serve(req);
    stats.requests++;
    req.cache.countedBy = stats;
    const now = this.#now();
    const stored = req.cache.stored;
    const e = stored?.kept?.rules === this ? stored : undefined;
    if (e !== undefined) {
      const kept = e.kept!;
      const left = kept.ttl - Math.floor((now - kept.stored) / 1000);
      if (left > 0) {
        stats.hits[kept.kind]++;
        if (this.due(e, left, now)) {
          stats.prefetch++;
          this.#refresh(e, req, next, stats);
        }
        return this.#answer(req, e, this.keepTtl ? kept.ttl : left, now);
      }
      const stale = this.#options.serveStale;
      // A kept SERVFAIL is never worth serving past its few seconds.
      if (stale !== undefined && e.rcode !== Rcode.SERVFAIL && -left * 1000 <= stale.durationMs) {
        if (!stale.verify) {
          stats.servedStale++;
          this.#refresh(e, req, next, stats);
          return this.#answer(req, e, 0, now);
        }
        // verify: a failure neither reaches the client nor replaces the stale entry; with
        // prefer_positive, neither does a reply that does not answer what the stale one answered.
        const fresh = await next.serve(req).catch(() => undefined);
        if (fresh !== undefined && this.#replaces(e, req, fresh)) return this.#keep(req, fresh, now);
        stats.servedStale++;
        return this.#answer(req, e, 0, now);
      }
    }
    stats.misses++;
    return this.#keep(req, await next.serve(req), now);
  }

  /** The reply from a stored entry, every record with `ttl`. It is filed again only when the fast path
   * stopped replaying it though it is still fresh (a shuffled order that loadbalance renews): an
   * entry that answered stale, or that the fast path sent here to refresh or because it is too big
   * for this client, stays as it is. */
  #answer(req: Request, e: StoredAnswer, ttl: number, now: number): Msg {
    req.answeredBy = "cache";
    const m = decode(e.reply());
    // AD only for a client that set AD or DO (RFC 6840 5.7-5.8); the entry keeps it for those that do.
    const ad = m.ad && (req.msg.ad || req.msg.edns?.do === true);
    if (ttl === 0 || now < e.expires || ad !== m.ad) req.cache.private = true;
    else req.cache.kept = e.kept;
    const reply = replyTo(req.msg, m.rcode);
    reply.aa = m.aa;
    reply.ra = m.ra;
    reply.ad = ad;
    for (const rrs of [m.answer, m.authority, m.additional]) for (const rr of rrs) rr.ttl = ttl;
    reply.answer = m.answer;
    reply.authority = m.authority;
    reply.additional = m.additional;
    return reply;
  }

  /** Marks the next plugin's reply as kept when it may be, and answers with it. A kept reply goes out
   * with the entry's TTL on every record, as later hits will (CoreDNS does the same: no 300 -> 4 jump
   * under `cache 4`). What the plugins after this one said about replaying it (forward's one second)
   * no longer applies: the answer cache ages a kept entry's TTLs itself. */
  #keep(req: Request, reply: Msg, now: number): Msg {
    const kept = this.#decide(req, reply, now);
    if (kept === undefined) return reply;
    req.cache.kept = kept;
    req.cache.maxAge = Infinity;
    req.cache.stable = false;
    const raw = wireRecords(reply);
    if (raw !== undefined) {
      // Records still octets (a forwarded reply): the TTLs written in place, nothing decoded.
      setTtls(raw.wire, raw.questionEnd, kept.ttl);
      return reply;
    }
    // New records: the next plugin's may be shared with its own store.
    const at = (rrs: RR[]) => rrs.map((rr) => ({ ...rr, ttl: kept.ttl }));
    return {
      ...reply,
      answer: at(reply.answer),
      authority: at(reply.authority),
      additional: at(reply.additional),
    };
  }

  /** Whether a fresh reply may take the place of the stale entry `e`: not a failure, and with
   * serve_stale_policy prefer_positive, not a reply that leaves unanswered what `e` answered. */
  #replaces(e: StoredAnswer, req: Request, fresh: Msg): boolean {
    if (isFailureRcode(fresh.rcode)) return false;
    if (!this.#options.serveStale?.preferPositive || !e.kept?.answers) return true;
    return answersQuestion(fresh, req.qname, req.qtype);
  }

  /** How the reply is kept, or undefined when it is not: the store's classifier (wire-facts.ts) reads
   * its facts, off its octets when its records are still octets (a forwarded reply, as the wire lane
   * reads them), else off the decoded message. */
  #decide(req: Request, reply: Msg, now: number): KeepTerms | undefined {
    // A plugin's own failure (forward reached no upstream) is not a reply to keep: CoreDNS's cache
    // never sees it, and the next query should find the upstream back.
    if (req.cache.private || reply.tc || reply.question.length === 0 || reply.error) return undefined;
    const raw = wireRecords(reply);
    const f =
      raw !== undefined
        ? this.#facts.read(raw.wire, 0, raw.wire.length, raw.questionEnd, req.qtype)
        : this.#facts.readMsg(reply, req.qname, req.qtype);
    const kind = f.kind;
    if (kind === undefined) return undefined;
    const ttl = this.ttlFor(req.qname, kind, f.rcode, f.said < 0 ? undefined : f.said);
    if (ttl <= 0) return undefined;
    return { rules: this, kind, ttl, stored: now, answers: kind === "success" && f.answers };
  }

  /** Fetches the entry again in the background; the client's reply does not wait for it. A failure
   * keeps the old entry and is only counted. The new entry keeps the old one's popularity (as
   * CoreDNS's prefetch does). */
  #refresh(e: StoredAnswer, req: Request, next: Handler, stats: CacheStats): void {
    const refresh = req.cache.refresh;
    if (e.refreshing || refresh === undefined) return;
    e.refreshing = true;
    const failed = () => {
      e.refreshing = false;
      stats.refreshFailures++;
      return undefined;
    };
    refresh(async (own) => {
      own.cache.countedBy = stats;
      const reply = await next.serve(own);
      if (!this.#replaces(e, own, reply)) return failed();
      const kept = this.#keep(own, reply, this.#now());
      return own.cache.kept === undefined ? undefined : kept;
    }).then(
      (fresh) => {
        e.refreshing = false;
        if (fresh === undefined) return;
        fresh.hits = e.hits;
        fresh.lastHit = e.lastHit;
      },
      () => failed(),
    );
  }
}

/** qname is in (or below) one of the zones: a loop, not some(): no closure per query. */
function inZones(qname: string, zones: readonly string[]): boolean {
  for (let i = 0; i < zones.length; i++) if (isSubdomain(qname, zones[i])) return true;
  return false;
}

export function cachePlugin(c: Cache): Plugin {
  return (next) => c.handler(next);
}
