// One upstream server: its pooled connections, the exchange of one query (UDP, then TCP when the
// reply is truncated), and its health. Health follows CoreDNS: a failed exchange starts checks
// (`NAME IN NS`, default `. IN NS`) every interval; each check that gets no reply counts a failure,
// `maxFails` of them in a row mark the upstream down, and the first check that gets any reply at all
// (REFUSED and SERVFAIL included) marks it up and stops the checks.

import type { Logger } from "pino";
import type { Msg } from "../../dns/message.ts";
import type { Conn, Proto } from "./conn.ts";
import type { PoolOptions } from "./conn-pool.ts";
import type { UpstreamStats } from "./stats.ts";
import { ConnPool } from "./conn-pool.ts";
import { ExchangeCode, ExchangeError } from "./conn.ts";
import { asciiLower, randomId } from "../../client/reply-match.ts";
import { recordReply, upstreamStats } from "./stats.ts";
import { encode } from "../../dns/encode.ts";
import { newQuery } from "../../dns/message.ts";
import { Class, Type, rcodeName } from "../../dns/constants.ts";

export interface UpstreamAddress {
  host: string;
  port: number;
  /** "host:port" ("[v6]:port"), the `to` label of the metrics. */
  to: string;
  /** Asked over DNS over TLS (`tls://`), whatever transport the query came by. */
  tls?: boolean;
}

export interface HealthCheckOptions {
  intervalMs: number;
  /** The RD bit of the check query (`no_rec` clears it). */
  rd: boolean;
  /** The name asked for (type NS), canonical. */
  name: string;
  /** Transport of the checks: TCP with force_tcp, else UDP. */
  proto: Proto;
  /** How long one check waits for its reply. */
  timeoutMs: number;
}

export interface UpstreamOptions extends PoolOptions {
  /** Failed checks in a row that mark the upstream down; 0 turns health checking off. */
  maxFails: number;
  healthCheck: HealthCheckOptions;
  /** Longest wait for one reply (CoreDNS's read timeout, 2 s). */
  readTimeoutMs: number;
}

export class Upstream {
  readonly host: string;
  readonly port: number;
  readonly to: string;
  readonly stats: UpstreamStats;
  readonly #opts: UpstreamOptions;
  readonly #tls: boolean;
  readonly #pool: ConnPool;
  readonly #log: Logger;
  #fails = 0;
  #probing = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  /** The connection of the health check in progress, closed by close(). */
  #checking: Conn | undefined;

  constructor(addr: UpstreamAddress, opts: UpstreamOptions, log: Logger) {
    this.host = addr.host;
    this.port = addr.port;
    this.to = addr.to;
    // A DoT upstream takes every query, and its health checks, over TLS.
    this.#tls = addr.tls === true;
    this.#opts = this.#tls ? { ...opts, healthCheck: { ...opts.healthCheck, proto: "tcp-tls" } } : opts;
    this.#log = log;
    this.stats = upstreamStats(addr.to);
    this.#pool = new ConnPool(addr.host, addr.port, this.#opts, this.stats);
  }

  /** Failed health checks in a row. */
  get fails(): number {
    return this.#fails;
  }

  get down(): boolean {
    return this.#opts.maxFails > 0 && this.#fails >= this.#opts.maxFails;
  }

  /** Idle pooled connections of one transport. */
  idleConnections(proto: Proto): number {
    return this.#pool.idleCount(proto);
  }

  /**
   * Sends `query` (its ID is replaced by a random one) over `asked` (over TLS for a DoT upstream) and
   * returns the matching reply. A truncated UDP reply is asked again over TCP; when that fails, the
   * truncated reply is returned (the client can still retry over TCP itself). Rejects with an ExchangeError when no reply came by `deadline`
   * (Date.now() time) or the read timeout. A failure starts health checking.
   */
  async exchange(query: Msg, asked: Proto, deadline: number): Promise<Msg> {
    const proto = this.#tls ? "tcp-tls" : asked;
    let reply: Msg;
    try {
      reply = await this.#send(query, proto, deadline);
    } catch (err) {
      this.#suspect();
      throw err;
    }
    if (proto === "udp" && reply.tc && Date.now() < deadline) {
      try {
        return await this.#send(query, "tcp", deadline);
      } catch (err) {
        this.#log.debug({ err, to: this.to }, "TCP retry of a truncated reply failed");
      }
    }
    return reply;
  }

  /** Stops health checks and closes every connection. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#wake?.();
    this.#checking?.close();
    this.#pool.close();
  }

  async #send(query: Msg, proto: Proto, deadline: number): Promise<Msg> {
    const id = randomId();
    const q = query.question[0];
    const expect = { id, name: asciiLower(q.name), type: q.type, class: q.class };
    const bytes = encode({ ...query, id });
    const timeout = Math.max(1, Math.min(this.#opts.readTimeoutMs, deadline - Date.now()));
    this.stats.requests++;
    const start = performance.now();
    try {
      const taken = await this.#pool.take(proto);
      let conn = taken.conn;
      let reply: Msg;
      try {
        reply = await conn.exchange(bytes, expect, timeout);
      } catch (err) {
        // A pooled TCP connection the upstream closed while it sat idle: once more on a new one.
        const stale = taken.reused && proto !== "udp" && (err as ExchangeError).code !== ExchangeCode.TIMEOUT;
        if (!stale) throw err;
        conn = await this.#pool.open(proto);
        reply = await conn.exchange(bytes, expect, timeout);
      }
      this.#pool.give(conn);
      recordReply(this.stats, rcodeName(reply.rcode), (performance.now() - start) / 1000);
      return reply;
    } catch (err) {
      this.stats.failures++;
      throw err instanceof ExchangeError
        ? err
        : new ExchangeError(ExchangeCode.NETWORK, (err as Error).message, { cause: err });
    }
  }

  /** Starts the health checks unless they are off or already running. */
  #suspect(): void {
    if (this.#opts.maxFails === 0 || this.#probing || this.#closed) return;
    this.#probing = true;
    void this.#probe();
  }

  async #probe(): Promise<void> {
    const max = this.#opts.maxFails;
    while (!this.#closed) {
      if (await this.#check()) {
        if (this.down) this.#log.info({ to: this.to }, "upstream answers health checks again: up");
        this.#fails = 0;
        break;
      }
      this.#fails++;
      this.stats.healthcheckFailures++;
      if (this.#fails === max) {
        this.#log.warn({ to: this.to, fails: max }, "upstream failed its health checks: down");
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        this.#timer = setTimeout(resolve, this.#opts.healthCheck.intervalMs).unref();
      });
    }
    this.#probing = false;
  }

  /** One health check on a new connection: true when any matching reply came. */
  async #check(): Promise<boolean> {
    const hc = this.#opts.healthCheck;
    const q = newQuery(hc.name, Type.NS, Class.IN, randomId());
    q.rd = hc.rd;
    const expect = { id: q.id, name: hc.name, type: Type.NS, class: Class.IN };
    try {
      const conn = await this.#pool.open(hc.proto);
      this.#checking = conn;
      try {
        await conn.exchange(encode(q), expect, hc.timeoutMs);
      } finally {
        this.#checking = undefined;
        conn.close();
      }
      return true;
    } catch {
      return false;
    }
  }
}
