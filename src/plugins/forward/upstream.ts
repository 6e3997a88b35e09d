// One upstream server: its pooled connections, the exchange of one query (UDP, then TCP when the
// reply is truncated), and its health. Health follows CoreDNS: a failed exchange starts checks
// (`NAME IN NS`, default `. IN NS`) every interval; each check that gets no reply counts a failure,
// `maxFails` of them in a row mark the upstream down, and the first check that gets any reply at all
// (REFUSED and SERVFAIL included) marks it up and stops the checks.
//
// Against forged replies, a UDP query goes out on a socket of its own (a random source port), with a
// random ID and its name in random case (0x20), and only a reply that echoes all three is taken
// (reply-match.ts). A reply that fails only the case check ends that try: the query is asked again on a
// new socket, in new case; when that fails the same way it is asked without 0x20 (an upstream that
// does not echo case), and after CASE_STRIKES such queries in a row 0x20 stays off for that upstream
// for CASE_OFF_MS. The other checks' failures are dropped and waited past. All are counted, and logged
// at most once a minute per upstream.
import type { Logger } from "pino";
import type { Msg } from "../../dns/message.ts";
import type { Conn, Proto } from "./conn.ts";
import type { Mismatch } from "../../client/reply-match.ts";
import type { PoolOptions } from "./conn-pool.ts";
import type { UpstreamStats } from "./stats.ts";
import { ConnPool } from "./conn-pool.ts";
import { ExchangeCode, ExchangeError } from "./conn.ts";
import { queryName, randomCase, randomId } from "../../client/reply-match.ts";
import { forwardStats, recordReply, upstreamStats } from "./stats.ts";
import { encode } from "../../dns/encode.ts";
import { hexdump } from "../../dns/hexdump.ts";
import { QUERY_BLOCK, padded } from "../../dns/padding.ts";
import { newQuery } from "../../dns/message.ts";
import { Class, Rcode, Type, rcodeName } from "../../dns/constants.ts";

/** Queries in a row whose replies failed the case check, in 0x20 case twice, before 0x20 goes off. */
const CASE_STRIKES = 3;
/** How long 0x20 stays off for an upstream that does not echo case before it is tried again. */
const CASE_OFF_MS = 10 * 60_000;
/** At most one log line about rejected replies per upstream this often. */
const REJECT_LOG_MS = 60_000;
/** How long a PING on a DoH connection whose try timed out may go unanswered before it is closed. */
const DOH_PROBE_MS = 1000;

export interface UpstreamAddress {
  host: string;
  port: number;
  /** "host:port" ("[v6]:port"), the `to` label of the metrics. */
  to: string;
  /** Asked over DNS over TLS (`tls://`), whatever transport the query came by. */
  tls?: boolean;
  /** Asked over DNS over HTTPS (`https://`), whatever transport the query came by. */
  https?: boolean;
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
  /** The transport every query and health check takes, for a DoT or DoH upstream. */
  readonly #secure: "tcp-tls" | "https" | undefined;
  readonly #pool: ConnPool;
  readonly #log: Logger;
  #fails = 0;
  #probing = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  /** The connection of the health check in progress, closed by close(). */
  #checking: Conn | undefined;
  /** Queries in a row whose 0x20 tries all failed the case check. */
  #caseStrikes = 0;
  /** Date.now() until which queries go without 0x20. */
  #caseOffUntil = 0;
  /** Rejected packets by reason since the last log line about them, and when that was. */
  #rejectedSince: Partial<Record<Mismatch, number>> = {};
  #rejectLoggedAt = -Infinity;

  constructor(addr: UpstreamAddress, opts: UpstreamOptions, log: Logger) {
    this.host = addr.host;
    this.port = addr.port;
    this.to = addr.to;
    // A DoT (DoH) upstream takes every query, and its health checks, over TLS (HTTPS).
    this.#secure = addr.tls === true ? "tcp-tls" : addr.https === true ? "https" : undefined;
    const secure = this.#secure;
    this.#opts = secure ? { ...opts, healthCheck: { ...opts.healthCheck, proto: secure } } : opts;
    this.#log = log;
    this.stats = upstreamStats(addr.to);
    this.#pool = new ConnPool(addr, this.#opts, this.stats, (why, packet) => this.#rejected(why, packet));
  }

  /** The transport every query takes for a tls:// ("tcp-tls") or https:// ("https") upstream; undefined
   * for a plain one (the client's transport, or force_tcp's, prefer_udp's). */
  get secure(): "tcp-tls" | "https" | undefined {
    return this.#secure;
  }

  /** Failed health checks in a row. */
  get fails(): number {
    return this.#fails;
  }

  get down(): boolean {
    return this.#opts.maxFails > 0 && this.#fails >= this.#opts.maxFails;
  }

  /** Whether UDP queries go out in 0x20 case now (off for a while after the upstream did not echo it). */
  get caseRandomized(): boolean {
    return Date.now() >= this.#caseOffUntil;
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
    const proto = this.#secure ?? asked;
    let reply: Msg;
    try {
      reply = await this.#ask(query, proto, deadline);
    } catch (err) {
      const code = (err as ExchangeError).code;
      // Neither a reached socket cap nor a forgery says anything about the upstream's health.
      if (code !== ExchangeCode.SOCKETS && code !== ExchangeCode.CASE) this.#suspect();
      throw err;
    }
    // An upstream that does not know EDNS answers FORMERR without an OPT record (RFC 6891 7): ask it
    // again without ours, as the client may well have asked (CoreDNS relays such a query as it is).
    if (reply.rcode === Rcode.FORMERR && reply.edns === undefined && query.edns !== undefined) {
      const plain = { ...query, edns: undefined };
      const again =
        Date.now() < deadline ? await this.#ask(plain, proto, deadline).catch(() => undefined) : undefined;
      if (again === undefined) return reply;
      [query, reply] = [plain, again];
    }
    if (proto === "udp" && reply.tc && Date.now() < deadline) {
      try {
        return await this.#send(query, "tcp", deadline, false);
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

  /** One query's tries over `proto`: in 0x20 case over UDP (twice at most), then without it. */
  async #ask(query: Msg, proto: Proto, deadline: number): Promise<Msg> {
    // TCP needs no 0x20: an off-path attacker cannot inject into a connection it cannot see.
    const caps = proto === "udp" && this.caseRandomized;
    for (let attempt = 0; ; attempt++) {
      const exact = caps && attempt < 2;
      if (caps && !exact) this.stats.caseFallbacks++;
      try {
        const reply = await this.#send(query, proto, deadline, exact);
        if (exact) this.#caseStrikes = 0;
        return reply;
      } catch (err) {
        if ((err as ExchangeError).code !== ExchangeCode.CASE || Date.now() >= deadline) throw err;
        if (attempt === 1) this.#caseFailed();
      }
    }
  }

  /** A query whose two 0x20 tries both came back in another case: the upstream may not echo case. */
  #caseFailed(): void {
    if (++this.#caseStrikes < CASE_STRIKES) return;
    this.#caseStrikes = 0;
    this.#caseOffUntil = Date.now() + CASE_OFF_MS;
    this.#log.warn(
      { to: this.to, queries: CASE_STRIKES, offMinutes: CASE_OFF_MS / 60_000 },
      "upstream does not echo the query name's case (0x20): queries to it go without 0x20 for a while",
    );
  }

  /** Counts a query not sent for the cap on open UDP sockets; says so at most once a minute. */
  #atCap(): void {
    forwardStats.udpSocketCapRefused++;
    const cap = this.#opts.udpSockets;
    const now = Date.now();
    if (now - cap.warnedAt < REJECT_LOG_MS) return;
    cap.warnedAt = now;
    this.#log.warn(
      { to: this.to, max: cap.max },
      "UDP sockets to upstreams are all in use (one per query in flight): queries past the cap are not " +
        "sent (clusterdns_forward_udp_socket_cap_total); at most one such line a minute",
    );
  }

  /** Counts a packet that was not the reply, and logs the counts at most once a minute; at debug level
   * (the `debug` plugin) each one too, with its hex dump, as CoreDNS's forward dumps a wrong reply. */
  #rejected(why: Mismatch, packet?: Uint8Array): void {
    this.stats.rejected[why]++;
    if (packet !== undefined && this.#log.isLevelEnabled("debug")) {
      this.#log.debug({ to: this.to, why }, `reply failed the checks (${why})\n${hexdump(packet)}`);
    }
    this.#rejectedSince[why] = (this.#rejectedSince[why] ?? 0) + 1;
    const now = Date.now();
    if (now - this.#rejectLoggedAt < REJECT_LOG_MS) return;
    this.#rejectLoggedAt = now;
    this.#log.warn(
      { to: this.to, rejected: this.#rejectedSince },
      "dropped packets from the upstream that failed the reply checks (late or forged); " +
        "counts since the last such line, at most one a minute",
    );
    this.#rejectedSince = {};
  }

  async #send(query: Msg, proto: Proto, deadline: number, exactCase: boolean): Promise<Msg> {
    // RFC 8484 4.1: ID 0 over DoH (a stream of its own carries the reply, so nothing is lost).
    const id = proto === "https" ? 0 : randomId();
    const q = query.question[0];
    const name = exactCase ? randomCase(q.name) : q.name;
    let bytes = encode({ ...query, id, question: [{ ...q, name }] });
    // Over TLS and HTTPS the query is padded, so its size does not name what is asked (RFC 7830;
    // RFC 8467 4.1: to a multiple of 128 octets). Never over plain UDP or TCP (RFC 7830 6).
    if (proto === "tcp-tls" || proto === "https") bytes = padded(bytes, QUERY_BLOCK);
    const wire = exactCase ? queryName(bytes) : undefined;
    const expect = { id, name, type: q.type, class: q.class, wire };
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
      const code = (err as ExchangeError).code;
      if (code === ExchangeCode.TIMEOUT && proto === "https") this.#pool.probeDoh(DOH_PROBE_MS);
      if (code === ExchangeCode.SOCKETS) this.#atCap();
      else if (code !== ExchangeCode.CASE) this.stats.failures++;
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
