// One gRPC upstream: its HTTP/2 connection (forward's h2-session.ts: opened on first use, again after
// it closed, so an upstream that restarted is reached at its next query), the exchange of one query,
// its counters, and a back-off after failures: the plugin tries an upstream that failed lately after
// the others (1 s after the first failure, doubling up to 30 s, ended by its next reply; gRPC's own
// connection back-off has the same shape), so a dead upstream costs a query a try only when no other
// answered. Failures are logged: the first of a kind at once, the same one again at most once a minute,
// with how many there were. A try that timed out has the connection probed with a PING
// (h2-session.ts), so one to an upstream that vanished without closing it is replaced.

import type { Logger } from "pino";
import type { Msg } from "../../dns/message.ts";
import type { Mismatch } from "../../client/reply-match.ts";
import type { TlsSettings } from "../forward/tcp-conn.ts";
import type { GrpcStats } from "./stats.ts";
import { H2Session } from "../forward/h2-session.ts";
import { ExchangeCode, type ExchangeError } from "../forward/conn.ts";
import { GrpcCallError, GrpcConn } from "./grpc-conn.ts";
import { bump, upstreamGrpcStats } from "./stats.ts";
import { randomId } from "../../client/reply-match.ts";
import { encode } from "../../dns/encode.ts";
import { hexdump } from "../../dns/hexdump.ts";
import { rcodeName } from "../../dns/constants.ts";

const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
const LOG_EVERY_MS = 60_000;
/** How long a PING after a timed-out try may go unanswered before the connection is closed (the 20 s
 * of gRPC's keepalive timeout would leave a dead connection to 20 s of queries). */
const PROBE_MS = 1000;
/** How long an unused connection stays open: grpc-go's default idle timeout. */
const IDLE_MS = 30 * 60_000;

export interface GrpcAddress {
  host: string;
  port: number;
  /** A unix socket (unix://PATH) instead of host and port. */
  path?: string;
  /** "host:port", "[v6]:port" or "unix://PATH": the `to` label of the metrics. */
  to: string;
}

export class GrpcUpstream {
  readonly to: string;
  readonly stats: GrpcStats;
  readonly #session: H2Session;
  readonly #log: Logger;
  #failures = 0;
  #backoffUntil = 0;
  /** The last failure logged, when, and how many like it came since. */
  #logged = { what: "", at: -Infinity, since: 0 };

  constructor(addr: GrpcAddress, tls: TlsSettings | undefined, log: Logger) {
    this.to = addr.to;
    this.stats = upstreamGrpcStats(addr.to);
    this.#session = new H2Session({ ...addr, tls, idleMs: IDLE_MS });
    this.#log = log;
  }

  /** Failed lately: tried after the upstreams that did not. */
  get backingOff(): boolean {
    return Date.now() < this.#backoffUntil;
  }

  /** Sends `query` (with a random ID) and returns the matching reply; rejects with an ExchangeError
   * when none came within `timeoutMs`. */
  async exchange(query: Msg, timeoutMs: number): Promise<Msg> {
    const id = randomId();
    const q = query.question[0];
    const expect = { id, name: q.name, type: q.type, class: q.class };
    const conn = new GrpcConn(this.#session.get().session, this.#session.authority, (why, packet) =>
      this.#rejected(why, packet),
    );
    this.stats.requests++;
    const start = performance.now();
    try {
      const reply = await conn.exchange(encode({ ...query, id }), expect, timeoutMs);
      bump(this.stats.responses, rcodeName(reply.rcode));
      this.stats.duration.observe((performance.now() - start) / 1000);
      this.#failures = 0;
      this.#backoffUntil = 0;
      return reply;
    } catch (err) {
      if ((err as ExchangeError).code === ExchangeCode.TIMEOUT) this.#session.probe(PROBE_MS);
      this.#failed(err as Error);
      throw err;
    } finally {
      conn.close();
    }
  }

  close(): void {
    this.#session.close();
  }

  #failed(err: Error): void {
    const reason =
      err instanceof GrpcCallError
        ? err.reason
        : (err as ExchangeError).code === ExchangeCode.TIMEOUT
          ? "timeout"
          : "network";
    bump(this.stats.failures, reason);
    this.#failures++;
    this.#backoffUntil = Date.now() + Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (this.#failures - 1));
    const l = this.#logged;
    const now = Date.now();
    if (err.message === l.what && now - l.at < LOG_EVERY_MS) {
      l.since++;
      return;
    }
    this.#log.warn(
      { to: this.to, reason, ...(l.since > 0 ? { repeatedBefore: l.since } : {}) },
      `grpc upstream ${this.to} failed: ${err.message}`,
    );
    this.#logged = { what: err.message, at: now, since: 0 };
  }

  /** A reply that failed the checks: counted, and at debug level (the `debug` plugin) dumped. */
  #rejected(why: Mismatch, packet?: Uint8Array): void {
    this.stats.rejected[why]++;
    if (packet !== undefined && this.#log.isLevelEnabled("debug"))
      this.#log.debug({ to: this.to, why }, `reply failed the checks (${why})\n${hexdump(packet)}`);
  }
}
