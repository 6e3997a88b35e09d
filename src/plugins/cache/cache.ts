// cache: keeps replies of the plugins after it (forward, file, ...) for their TTL, in two LRU caches
// (lru-cache): successes and denials. Answers from it carry the time left as TTL. With prefetch a
// popular entry is refreshed before it expires; with serve_stale an expired entry still answers
// while its refresh (or the upstream) is away.
//
// The server's wire answer cache sits in front: a reply that comes through here may be replayed from
// it for one second at most (req.maxAge), so TTLs keep counting down for clients.

import { LRUCache } from "lru-cache";
import type { Handler, Plugin, Request } from "../../plugin.ts";
import { isFailureRcode } from "../../plugin.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import type { Entry, Kind } from "./entry.ts";
import { answerFrom, kindOf, makeEntry, remaining, replyTtl } from "./entry.ts";
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
  prefetch?: { amount: number; durationMs: number; percentage: number };
  serveStale?: { durationMs: number; verify: boolean };
  /** How long SERVFAIL replies are kept, in seconds; 0 keeps none. */
  servfailTtl: number;
  disable: { success: readonly string[]; denial: readonly string[] };
  keepTtl: boolean;
  now?: () => number;
}

/** How long the wire answer cache may replay a reply that went through here. */
export const CACHE_MAX_AGE = 1;

export class Cache {
  readonly #o: CacheOptions;
  readonly #now: () => number;
  readonly #lru: Record<Kind, LRUCache<string, Entry>>;
  readonly #live: LiveCache;

  constructor(o: CacheOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    const lru = (kind: Kind) =>
      new LRUCache<string, Entry>({
        max: o[kind].capacity,
        dispose: (_v, _k, reason) => {
          const server = this.#live.server;
          if (reason === "evict" && server !== undefined)
            statsFor(server, this.#live.zones).evictions[kind]++;
        },
      });
    this.#lru = { success: lru("success"), denial: lru("denial") };
    // Counted under the plugin's zones, joined: "." for `cache 30` in the kubeadm Corefile.
    this.#live = { server: undefined, zones: o.zones.join(" "), size: (kind) => this.#lru[kind].size };
  }

  /** Shows this cache's entries in coredns_cache_entries until stop(). */
  start(): void {
    liveCaches.add(this.#live);
  }

  stop(): void {
    liveCaches.delete(this.#live);
    this.#lru.success.clear();
    this.#lru.denial.clear();
  }

  handler(next: Handler): Handler {
    return {
      name: "cache",
      serve: (req) => this.#serve(req, next),
    };
  }

  #applies(qname: string): boolean {
    return this.#o.zones.some((z) => isSubdomain(qname, z));
  }

  async #serve(req: Request, next: Handler): Promise<Msg> {
    if (req.qtype === Type.AXFR || req.qtype === Type.IXFR || !this.#applies(req.qname))
      return next.serve(req);
    this.#live.server = req.server;
    const stats = statsFor(req.server, this.#live.zones);
    stats.requests++;
    const key = keyOf(req);
    const now = this.#now();
    const found = this.#lru.success.get(key) ?? this.#lru.denial.get(key);
    if (found !== undefined) {
      const left = remaining(found, now);
      if (left > 0) {
        stats.hits[found.kind]++;
        this.#maybePrefetch(found, key, req, next, left, now, stats);
        return this.#answer(req, found, this.#o.keepTtl ? found.ttl : left);
      }
      const stale = this.#o.serveStale;
      const expiredFor = now - (found.stored + found.ttl * 1000);
      // A kept SERVFAIL is never worth serving past its few seconds.
      if (stale !== undefined && found.rcode !== Rcode.SERVFAIL && expiredFor <= stale.durationMs) {
        if (!stale.verify) {
          stats.servedStale++;
          this.#refresh(found, key, req, next, stats);
          return this.#answer(req, found, 0);
        }
        // verify: a failure neither reaches the client nor replaces the stale entry.
        const fresh = await next.serve(req).catch(() => undefined);
        if (fresh !== undefined && !isFailureRcode(fresh.rcode)) return this.#keep(key, req, fresh);
        stats.servedStale++;
        return this.#answer(req, found, 0);
      }
      this.#lru[found.kind].delete(key);
    }
    stats.misses++;
    return this.#keep(key, req, await next.serve(req));
  }

  #answer(req: Request, e: Entry, ttl: number): Msg {
    req.answeredBy = "cache";
    req.maxAge = Math.min(req.maxAge ?? CACHE_MAX_AGE, CACHE_MAX_AGE);
    return answerFrom(e, req.msg, ttl);
  }

  /** Stores the next plugin's reply when it may be kept, and answers with it. A kept reply goes out
   * with the entry's TTL on every record, as later hits will (CoreDNS does the same: no 300 -> 4 jump
   * under `cache 4`), and the wire cache replays it a second at most, so TTLs keep counting down. */
  #keep(key: string, req: Request, reply: Msg): Msg {
    const e = this.#store(key, req, reply);
    if (e === undefined) return reply;
    req.maxAge = Math.min(req.maxAge ?? CACHE_MAX_AGE, CACHE_MAX_AGE);
    // New records: the next plugin's may be shared with its own store.
    const at = (rrs: RR[]) => rrs.map((rr) => ({ ...rr, ttl: e.ttl }));
    return {
      ...reply,
      answer: at(reply.answer),
      authority: at(reply.authority),
      additional: at(reply.additional),
    };
  }

  /** Keeps the reply when it may be kept: the new entry, or undefined. */
  #store(key: string, req: Request, reply: Msg): Entry | undefined {
    if (req.private || reply.tc || reply.question.length === 0) return undefined;
    const kind = kindOf(reply);
    if (kind === undefined) return undefined;
    if (this.#o.disable[kind].some((z) => isSubdomain(req.qname, z))) return undefined;
    const s = this.#o[kind];
    let ttl: number;
    if (reply.rcode === Rcode.SERVFAIL) {
      ttl = this.#o.servfailTtl;
    } else {
      // MINTTL raises short TTLs, and the maximum has the last word (`cache 3` keeps nothing past 3 s).
      const said = replyTtl(reply, kind) ?? s.minTtl;
      ttl = Math.min(s.maxTtl, Math.max(s.minTtl, said));
    }
    if (ttl <= 0) return undefined;
    const e = makeEntry(reply, kind, ttl, this.#now());
    // One entry per key: a name that turned from denial to success leaves the other cache.
    this.#lru[kind === "success" ? "denial" : "success"].delete(key);
    this.#lru[kind].set(key, e);
    return e;
  }

  #maybePrefetch(
    e: Entry,
    key: string,
    req: Request,
    next: Handler,
    left: number,
    now: number,
    stats: CacheStats,
  ): void {
    const p = this.#o.prefetch;
    if (p === undefined) return;
    // Popular: AMOUNT hits with no gap of DURATION or more between them (CoreDNS's rule).
    e.hits = now - e.lastHit >= p.durationMs ? 1 : e.hits + 1;
    e.lastHit = now;
    if (e.hits < p.amount || e.refreshing) return;
    // Due once the time left is down to PERCENTAGE of the TTL, or in its last second.
    if (left > Math.max(1, Math.ceil((e.ttl * p.percentage) / 100))) return;
    stats.prefetch++;
    this.#refresh(e, key, req, next, stats);
  }

  /** Fetches the entry again in the background; the client's reply does not wait for it. A failure
   * keeps the old entry and is only counted. */
  #refresh(e: Entry, key: string, req: Request, next: Handler, stats: CacheStats): void {
    if (e.refreshing) return;
    e.refreshing = true;
    // A request of its own: the client's is answered (and may be mutated by the plugins after us).
    const own: Request = {
      ...req,
      private: false,
      maxAge: undefined,
      stable: undefined,
      answeredBy: undefined,
    };
    const failed = () => {
      e.refreshing = false;
      stats.refreshFailures++;
    };
    next.serve(own).then((reply) => {
      if (isFailureRcode(reply.rcode)) return failed();
      e.refreshing = false;
      const fresh = this.#store(key, own, reply);
      // The name stays as popular as it was.
      if (fresh !== undefined) {
        fresh.hits = e.hits;
        fresh.lastHit = e.lastHit;
      }
    }, failed);
  }
}

/** The cache key: name, type and class, and the DO and CD bits (they change what an answer holds). */
function keyOf(req: Request): string {
  const m = req.msg;
  return `${req.qname}/${req.qtype}/${req.qclass}/${m.edns?.do ? 1 : 0}${m.cd ? 1 : 0}`;
}

export function cachePlugin(c: Cache): Plugin {
  return (next) => c.handler(next);
}
