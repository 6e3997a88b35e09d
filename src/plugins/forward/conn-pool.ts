// Idle connections to one upstream, per transport, reused for later queries and closed once idle for
// `expireMs` (CoreDNS's `expire`, 10s by default). A connection carries one query at a time, so
// concurrent queries each take their own; the most recently used is taken first, which lets the
// others age out when traffic drops.

import type { Conn, Proto } from "./conn.ts";
import type { UpstreamStats } from "./stats.ts";
import { TcpConn } from "./tcp-conn.ts";
import { UdpConn } from "./udp-conn.ts";

export interface PoolOptions {
  expireMs: number;
  /** Most idle connections kept per transport; 0 for no limit. */
  maxIdle: number;
}

export class ConnPool {
  readonly #host: string;
  readonly #port: number;
  readonly #opts: PoolOptions;
  readonly #stats: UpstreamStats;
  readonly #idle: Record<Proto, Conn[]> = { udp: [], tcp: [] };
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(host: string, port: number, opts: PoolOptions, stats: UpstreamStats) {
    this.#host = host;
    this.#port = port;
    this.#opts = opts;
    this.#stats = stats;
  }

  /** A connection for one exchange; `reused` tells whether it was idle in the pool (and may have been
   * closed by the upstream since, which only the exchange finds out). */
  async take(proto: Proto): Promise<{ conn: Conn; reused: boolean }> {
    const idle = this.#idle[proto];
    const oldest = Date.now() - this.#opts.expireMs;
    for (let c = idle.pop(); c; c = idle.pop()) {
      if (!c.closed && c.idleSince > oldest) {
        this.#stats.connCacheHits[proto]++;
        return { conn: c, reused: true };
      }
      c.close();
    }
    this.#stats.connCacheMisses[proto]++;
    return { conn: await this.open(proto), reused: false };
  }

  /** A new connection, not counted as a cache miss: for a retry after a stale one, or a health check. */
  open(proto: Proto): Promise<Conn> {
    const onMismatch = () => void this.#stats.mismatched++;
    if (proto === "udp") return UdpConn.open(this.#host, this.#port, onMismatch);
    return Promise.resolve(new TcpConn(this.#host, this.#port, onMismatch));
  }

  /** Hands back a connection whose exchange succeeded. */
  give(conn: Conn): void {
    const idle = this.#idle[conn.proto];
    if (this.#closed || conn.closed || this.#opts.expireMs <= 0 || this.#full(idle)) {
      conn.close();
      return;
    }
    idle.push(conn);
    this.#sweeper ??= setInterval(() => this.#sweep(), this.#opts.expireMs).unref();
  }

  /** Idle connections per transport, for tests and debugging. */
  idleCount(proto: Proto): number {
    return this.#idle[proto].length;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    for (const list of Object.values(this.#idle)) for (const c of list.splice(0)) c.close();
  }

  #full(idle: Conn[]): boolean {
    return this.#opts.maxIdle > 0 && idle.length >= this.#opts.maxIdle;
  }

  /** Closes what has been idle too long (the oldest sit at the front) and forgets closed ones. */
  #sweep(): void {
    const oldest = Date.now() - this.#opts.expireMs;
    for (const list of Object.values(this.#idle)) {
      let n = 0;
      for (const c of list) {
        if (!c.closed && c.idleSince > oldest) list[n++] = c;
        else c.close();
      }
      list.length = n;
    }
    if (this.#idle.udp.length === 0 && this.#idle.tcp.length === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
