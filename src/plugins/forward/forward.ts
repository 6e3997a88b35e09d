// forward: sends queries under FROM to upstream resolvers (plain DNS, or DNS over TLS) and relays their
// replies. Upstreams are
// tried in the policy's order, skipping those marked down, each at most once per query, within an
// overall deadline; a network failure moves on to the next one. What comes back is the upstream's
// message with the client's ID and question; the pipeline fits it to the client's buffer (TC).

import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import type { Proto } from "./conn.ts";
import type { PolicyName } from "./policy.ts";
import type { HealthCheckOptions, UpstreamAddress } from "./upstream.ts";
import type { TlsSettings } from "./tcp-conn.ts";
import type { DohMethod } from "./doh-conn.ts";
import type { ForwardExchange, ForwardTap } from "./tap.ts";
import { failure } from "../../chain/handler.ts";
import { PluginError } from "../../chain/plugin-error.ts";
import { RCODE_TAG } from "../../chain/trace-span.ts";
import { Rcode, rcodeName } from "../../dns/constants.ts";
import { sendsName } from "./upstream-options.ts";
import { makePolicy, shuffled } from "./policy.ts";
import { forwardStats } from "./stats.ts";
import { FORWARD_MAX_AGE, forClient, upstreamQuery } from "./relay.ts";
import { Upstream } from "./upstream.ts";
import { UdpSocketCap } from "./udp-conn.ts";
import { ExchangeCode, type ExchangeError } from "./conn.ts";

export const NAME = "forward";

export interface ForwardOptions {
  /** Canonical zone whose names are forwarded. */
  from: string;
  to: UpstreamAddress[];
  /** Canonical names under FROM that are not forwarded (passed to the next plugin). */
  except: string[];
  forceTcp: boolean;
  preferUdp: boolean;
  expireMs: number;
  /** Longest a connection is reused after it was opened (max_age); 0 for no limit. */
  maxAgeMs: number;
  /** The `tls` files and `tls_servername`, for the tls:// and https:// upstreams. */
  tls: TlsSettings;
  /** `doh_method`: how queries go to https:// upstreams (POST by default, as CoreDNS). */
  dohMethod: DohMethod;
  maxIdleConns: number;
  maxFails: number;
  healthCheck: Omit<HealthCheckOptions, "proto" | "timeoutMs">;
  policy: PolicyName;
  /** Queries in flight beyond which new ones get REFUSED; 0 for no limit. */
  maxConcurrent: number;
  /** Upstream rcodes that hand the query to the next plugin when that is another forward. */
  next: ReadonlySet<number>;
  /** NOERROR with an empty answer also goes to the next forward. */
  nextOnNodata: boolean;
  /** Upstream rcodes after which the next upstream is tried. */
  failover: ReadonlySet<number>;
  /** SERVFAIL at once when every upstream is down, instead of trying a random one. */
  failfastAllUnhealthy: boolean;
  /** Most tries without a reply for one query (max_connect_attempts): undefined for CoreDNS's default,
   * twice the number of upstreams; 0 for no limit but the deadline. */
  maxConnectAttempts: number | undefined;
  /** Longest wait for one reply (read_timeout). */
  readTimeoutMs: number;
  // Not Corefile options: CoreDNS's fixed timeouts, lowered by tests.
  /** Longest a query may spend on all its attempts. */
  deadlineMs: number;
  /** Longest wait for the reply to one health check. */
  healthCheckTimeoutMs: number;
  /** Most UDP sockets to upstreams open at once (one per query in flight); queries past it are not
   * sent (SERVFAIL unless another upstream can take them). Not a CoreDNS option. */
  maxUdpSockets: number;
}

export const FORWARD_DEFAULTS = {
  expireMs: 10_000,
  maxAgeMs: 0,
  maxIdleConns: 0,
  maxFails: 2,
  healthCheck: { intervalMs: 500, rd: true, name: "." },
  policy: "random",
  maxConcurrent: 0,
  readTimeoutMs: 2000,
  deadlineMs: 5000,
  healthCheckTimeoutMs: 1000,
  maxUdpSockets: 4096,
} as const;

export class Forward {
  readonly opts: ForwardOptions;
  readonly upstreams: readonly Upstream[];
  /** Queries being forwarded now (max_concurrent counts these). */
  inFlight = 0;
  readonly #order: () => readonly Upstream[];
  readonly #log: Logger;
  /** dnstap targets of the block, told of every try (empty without dnstap). */
  readonly #taps: readonly ForwardTap[];

  constructor(opts: ForwardOptions, log: Logger, taps: readonly ForwardTap[] = []) {
    this.opts = opts;
    this.#log = log;
    this.#taps = taps;
    const hc: HealthCheckOptions = {
      ...opts.healthCheck,
      proto: opts.forceTcp ? "tcp" : "udp",
      timeoutMs: opts.healthCheckTimeoutMs,
    };
    const udpSockets = new UdpSocketCap(opts.maxUdpSockets);
    this.upstreams = opts.to.map(
      (addr) =>
        new Upstream(
          addr,
          {
            expireMs: opts.expireMs,
            maxAgeMs: opts.maxAgeMs,
            tls: addr.tls || addr.https ? opts.tls : undefined,
            dohMethod: opts.dohMethod,
            maxIdle: opts.maxIdleConns,
            maxFails: opts.maxFails,
            healthCheck: hc,
            readTimeoutMs: opts.readTimeoutMs,
            udpSockets,
          },
          log,
        ),
    );
    this.#order = makePolicy(opts.policy, this.upstreams);
  }

  handler(next: Handler): Handler {
    return {
      name: NAME,
      serve: (req) => this.#serve(req, next),
    };
  }

  close(): void {
    for (const u of this.upstreams) u.close();
  }

  async #serve(req: Request, next: Handler): Promise<Msg> {
    if (!sendsName(this.opts, req.qname)) return next.serve(req);
    req.answeredBy = NAME;
    const max = this.opts.maxConcurrent;
    if (max > 0 && this.inFlight >= max) {
      forwardStats.maxConcurrentRejects++;
      const refused = failure(req, Rcode.REFUSED);
      refused.error = forwardError(
        "CDNS_ERR_FORWARD_MAX_CONCURRENT",
        `concurrent queries exceeded maximum ${max}`,
      );
      return refused;
    }
    let reply: Msg | Error;
    this.inFlight++;
    try {
      reply = await this.#forward(req);
    } finally {
      this.inFlight--;
    }
    if (reply instanceof Error) return failed(req, reply);
    if (next.name === NAME && this.#passOn(reply)) return next.serve(req);
    req.cache.limit(FORWARD_MAX_AGE);
    req.cache.outside = true;
    return forClient(reply, req.msg);
  }

  #passOn(reply: Msg): boolean {
    if (this.opts.next.has(reply.rcode)) return true;
    return this.opts.nextOnNodata && reply.rcode === Rcode.NOERROR && reply.answer.length === 0;
  }

  /** The upstreams to try, in order, and how many tries without a reply are allowed; an error when
   * every upstream is down and failfast says not to try. As CoreDNS: tries that get no reply go round
   * the list again (a lost UDP packet to the only upstream is asked again) up to max_connect_attempts,
   * twice the number of upstreams by default; every upstream down, one random one is tried once. */
  #plan(): { list: readonly Upstream[]; cap: number } | Error {
    const list = this.#order().filter((u) => !u.down);
    if (list.length > 0) return { list, cap: this.opts.maxConnectAttempts ?? 2 * this.upstreams.length };
    // Every upstream failed its checks: assume the checks are what is broken, as CoreDNS does.
    forwardStats.healthcheckBroken++;
    if (this.opts.failfastAllUnhealthy)
      return forwardError("CDNS_ERR_FORWARD_NO_HEALTHY", "no healthy upstream");
    return { list: shuffled(this.upstreams).slice(0, 1), cap: 1 };
  }

  /** The upstream's reply, or why none came: the last try's error, as CoreDNS reports it. */
  async #forward(req: Request): Promise<Msg | Error> {
    const plan = this.#plan();
    if (plan instanceof Error) return plan;
    const { list, cap } = plan;
    const o = this.opts;
    const proto: Proto = o.forceTcp ? "tcp" : o.preferUdp ? "udp" : req.proto;
    const query = upstreamQuery(req.msg, req.upstreamOptions ?? []);
    // CoreDNS's 5 s for all attempts, or the query's own deadline (`cancel`) when that comes first.
    const deadline = Math.min(Date.now() + o.deadlineMs, req.deadline ?? Infinity);
    let last: Msg | undefined;
    let error: Error | undefined;
    let failures = 0;
    let failovers = 0;
    for (let i = 0; (cap === 0 || failures < cap) && Date.now() < deadline; i++) {
      const u = list[i % list.length];
      const started = this.#taps.length > 0 ? Date.now() : 0;
      // A traced query's try gets a span, named and tagged as CoreDNS's (peer.address), with the
      // reply's rcode or, for a try that failed, an error status saying why.
      const span = req.span?.child("connect", "client");
      span?.tag("peer.address", u.to);
      try {
        last = await u.exchange(query, proto, deadline);
        span?.tag(RCODE_TAG, rcodeName(last.rcode));
      } catch (err) {
        error = err as Error;
        span?.fail(error.message);
        this.#log.debug({ err, to: u.to, qname: req.qname, qtype: req.qtype }, "upstream did not answer");
        if (started > 0) tapTry(this.#taps, req, u, { proto, query, reply: undefined, started });
        // Not sent for the cap on UDP sockets, which every upstream here shares: no use going round.
        if ((err as ExchangeError).code === ExchangeCode.SOCKETS) break;
        failures++;
        continue;
      } finally {
        span?.end();
      }
      if (started > 0) tapTry(this.#taps, req, u, { proto, query, reply: last, started });
      // A failover rcode moves on, at most once per upstream (CoreDNS's count).
      if (!o.failover.has(last.rcode) || ++failovers >= this.upstreams.length) return last;
    }
    if (last !== undefined) return last;
    const late = "the query's deadline passed before any upstream was tried";
    return error ?? forwardError("CDNS_ERR_FORWARD_DEADLINE", late);
  }
}

/** The SERVFAIL of a query no upstream answered, carrying why for the `errors` plugin: the client gets
 * the reply it would without it, and the plugins between see the same rcode. */
function failed(req: Request, why: Error): Msg {
  const reply = failure(req, Rcode.SERVFAIL);
  reply.error = why;
  return reply;
}

function forwardError(code: string, message: string): PluginError {
  return new PluginError(NAME, code, message);
}

/** Tells each tap of one try to upstream `u`. */
function tapTry(taps: readonly ForwardTap[], req: Request, u: Upstream, t: TapTry): void {
  const e: ForwardExchange = {
    clientAddress: req.remoteAddress,
    clientPort: req.remotePort,
    upstreamHost: u.host,
    upstreamPort: u.port,
    proto: u.secure ?? t.proto,
    query: t.query,
    reply: t.reply,
    startedMs: t.started,
  };
  for (const tap of taps) tap.forwarded(e);
}

interface TapTry {
  proto: Proto;
  query: Msg;
  reply: Msg | undefined;
  started: number;
}
