// Idle TCP and TLS connections to one upstream, reused for later queries and closed once idle for
// `expireMs` (CoreDNS's `expire`, 10s by default). A connection carries one query at a time, so
// concurrent queries each take their own; the most recently used is taken first, which lets the
// others age out when traffic drops. UDP is never reused: each query opens a socket on a new random
// port and closes it after (udp-conn.ts), where CoreDNS keeps one for up to `expire`.

import type { Conn, Proto } from "./conn.ts";
import type { Mismatch } from "../../client/reply-match.ts";
import type { UpstreamStats } from "./stats.ts";
import { tcpConn, tlsConn, type TlsSettings } from "./tcp-conn.ts";
import { UdpConn, type UdpSocketCap } from "./udp-conn.ts";
import type { DohMethod } from "./doh-conn.ts";
import type { H2Session } from "./h2-session.ts";

/** The DoH modules, imported once by the first DoH exchange (#dohConn). */
let dohModules: Promise<[typeof import("./h2-session.ts"), typeof import("./doh-conn.ts")]> | undefined;

export interface PoolOptions {
  expireMs: number;
  /** Most idle connections kept per transport; 0 for no limit. */
  maxIdle: number;
  /** Longest a connection is reused from its opening, idle or not (max_age); 0 for no limit. */
  maxAgeMs: number;
  /** Set for a DNS-over-TLS upstream (its connections are all "tcp-tls") and a DNS-over-HTTPS one. */
  tls?: TlsSettings;
  /** `doh_method`, for a DNS-over-HTTPS upstream. */
  dohMethod?: DohMethod;
  /** The cap on UDP sockets open at once, shared by the forward block's upstreams. */
  udpSockets: UdpSocketCap;
}

export class ConnPool {
  readonly #host: string;
  readonly #port: number;
  readonly #opts: PoolOptions;
  readonly #stats: UpstreamStats;
  readonly #onReject: (why: Mismatch, packet?: Uint8Array) => void;
  readonly #idle: Record<Proto, Conn[]> = { udp: [], tcp: [], "tcp-tls": [], https: [] };
  /** A DoH upstream's HTTP/2 connection, which every query shares (a stream each). */
  #doh: H2Session | undefined;
  /** The last TLS session the upstream gave us, to resume on the next connection. */
  #session: Buffer | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;

  /** `onReject` hears of every packet a connection did not take as its reply, and why. */
  constructor(
    to: { host: string; port: number },
    opts: PoolOptions,
    stats: UpstreamStats,
    onReject: (why: Mismatch, packet?: Uint8Array) => void,
  ) {
    this.#host = to.host;
    this.#port = to.port;
    this.#opts = opts;
    this.#stats = stats;
    this.#onReject = onReject;
  }

  /** A connection for one exchange; `reused` tells whether it was idle in the pool (and may have been
   * closed by the upstream since, which only the exchange finds out). */
  async take(proto: Proto): Promise<{ conn: Conn; reused: boolean }> {
    if (proto === "https") {
      const { conn, reused } = await this.#dohConn();
      (reused ? this.#stats.connCacheHits : this.#stats.connCacheMisses).https++;
      return { conn, reused };
    }
    const idle = this.#idle[proto];
    const now = Date.now();
    // An idle UDP socket is never there to take (give closes them), so UDP always opens one.
    for (let c = idle.pop(); c; c = idle.pop()) {
      if (this.#usable(c, now)) {
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
    const onReject = this.#onReject;
    if (proto === "udp")
      return UdpConn.open({ host: this.#host, port: this.#port }, this.#opts.udpSockets, onReject);
    const t = this.#opts.tls;
    if (proto === "tcp") return Promise.resolve(tcpConn(this.#host, this.#port, onReject));
    if (proto === "https") return this.#dohConn().then((d) => d.conn);
    if (t === undefined)
      throw new Error("forward: a DNS-over-TLS connection to an upstream without TLS settings");
    const keep = (session: Buffer) => void (this.#session = session);
    const resume = { session: this.#session, onSession: keep, onReject };
    return Promise.resolve(tlsConn(this.#host, this.#port, t, resume));
  }

  /** Hands back a connection whose exchange succeeded: kept for reuse, or closed (UDP always). */
  give(conn: Conn): void {
    const idle = this.#idle[conn.proto];
    // A DoH exchange is a stream, done with its reply; its HTTP/2 connection stays (#doh).
    if (
      conn.proto === "udp" ||
      conn.proto === "https" ||
      this.#closed ||
      !this.#usable(conn, Date.now()) ||
      this.#full(idle)
    ) {
      conn.close();
      return;
    }
    idle.push(conn);
    this.#sweeper ??= setInterval(() => this.#sweep(), this.#opts.expireMs).unref();
  }

  /** After a DoH try timed out: a PING on its HTTP/2 connection, which closes it when unanswered
   * within `ms` (h2-session.ts). */
  probeDoh(ms: number): void {
    this.#doh?.probe(ms);
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
    this.#doh?.close();
  }

  /** A stream on the DoH upstream's connection, and whether that connection was open already. */
  async #dohConn(): Promise<{ conn: Conn; reused: boolean }> {
    // Imported for DoH upstreams only: they bring node:http2, which a forward to UDP and TCP upstreams
    // (kubeadm's) never needs (measured: 0.45 MB of JS heap and 4.1 MB of RSS in a bare Node 24).
    const [{ H2Session }, { DohConn }] = await (dohModules ??= Promise.all([
      import("./h2-session.ts"),
      import("./doh-conn.ts"),
    ]));
    const tls = this.#opts.tls ?? {};
    this.#doh ??= new H2Session({ host: this.#host, port: this.#port, tls, idleMs: this.#opts.expireMs });
    const { session, reused } = this.#doh.get();
    const method = this.#opts.dohMethod ?? "POST";
    return { conn: new DohConn(session, { method, authority: this.#doh.authority }, this.#onReject), reused };
  }

  /** Open, used within `expire`, and younger than `max_age`. */
  #usable(c: Conn, now: number): boolean {
    const { expireMs, maxAgeMs } = this.#opts;
    if (c.closed || (c.idleSince > 0 && c.idleSince <= now - expireMs)) return false;
    return maxAgeMs <= 0 || c.openedAt > now - maxAgeMs;
  }

  #full(idle: Conn[]): boolean {
    return this.#opts.maxIdle > 0 && idle.length >= this.#opts.maxIdle;
  }

  /** Closes what has been idle too long (the oldest sit at the front) and forgets closed ones. */
  #sweep(): void {
    const now = Date.now();
    for (const list of Object.values(this.#idle)) {
      let n = 0;
      for (const c of list) {
        if (this.#usable(c, now)) list[n++] = c;
        else c.close();
      }
      list.length = n;
    }
    if (Object.values(this.#idle).every((list) => list.length === 0)) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
