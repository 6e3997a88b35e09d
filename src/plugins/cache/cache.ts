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
import type { Msg } from "../../dns/message.ts";
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
        return this.#answer(req, found, left);
      }
      const staleFor = now - (found.stored + found.ttl * 1000);
      const stale = this.#o.serveStale;
      if (stale !== undefined && staleFor <= stale.durationMs) {
        if (!stale.verify) {
          stats.servedStale++;
          this.#refresh(found, key, req, next);
          return this.#answer(req, found, 0);
        }
        const fresh = await this.#fetch(key, req, next).catch(() => undefined);
        if (fresh !== undefined && !isFailureRcode(fresh.rcode)) return fresh;
        stats.servedStale++;
        return this.#answer(req, found, 0);
      }
      this.#lru[found.kind].delete(key);
    }
    stats.misses++;
    return this.#fetch(key, req, next);
  }

  #answer(req: Request, e: Entry, ttl: number): Msg {
    req.answeredBy = "cache";
    req.maxAge = Math.min(req.maxAge ?? CACHE_MAX_AGE, CACHE_MAX_AGE);
    return answerFrom(e, req.msg, ttl, this.#o.keepTtl);
  }

  /** Asks the next plugin and keeps its reply when it may be kept. */
  async #fetch(key: string, req: Request, next: Handler): Promise<Msg> {
    const reply = await next.serve(req);
    if (this.#store(key, req, reply)) req.maxAge = Math.min(req.maxAge ?? CACHE_MAX_AGE, CACHE_MAX_AGE);
    return reply;
  }

  #store(key: string, req: Request, reply: Msg): boolean {
    if (req.private || reply.tc || reply.question.length === 0) return false;
    const kind = kindOf(reply);
    if (kind === undefined) return false;
    if (this.#o.disable[kind].some((z) => isSubdomain(req.qname, z))) return false;
    const s = this.#o[kind];
    let ttl: number;
    if (reply.rcode === Rcode.SERVFAIL) {
      ttl = this.#o.servfailTtl;
    } else {
      const said = replyTtl(reply, kind) ?? s.minTtl;
      ttl = Math.max(s.minTtl, Math.min(s.maxTtl, said));
    }
    if (ttl <= 0) return false;
    const e = makeEntry(reply, kind, ttl, this.#now());
    // One entry per key: a name that turned from denial to success leaves the other cache.
    this.#lru[kind === "success" ? "denial" : "success"].delete(key);
    this.#lru[kind].set(key, e);
    return true;
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
    if (now - e.windowStart > p.durationMs) {
      e.windowStart = now;
      e.hits = 0;
    }
    e.hits++;
    if (e.hits < p.amount || e.refreshing) return;
    // Due once the time left is down to PERCENTAGE of the TTL, or in its last second.
    if (left > Math.max(1, (e.ttl * p.percentage) / 100)) return;
    stats.prefetch++;
    this.#refresh(e, key, req, next);
  }

  /** Fetches the entry again in the background; the client's reply does not wait for it. */
  #refresh(e: Entry, key: string, req: Request, next: Handler): void {
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
    void next.serve(own).then(
      (reply) => {
        e.refreshing = false;
        if (!isFailureRcode(reply.rcode)) this.#store(key, own, reply);
      },
      () => {
        e.refreshing = false;
      },
    );
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
