// grpc: sends queries under FROM to upstreams over DNS-over-gRPC (CoreDNS's DnsService) and relays
// their replies, as forward does over DNS (relay.ts: the same query upstream, the same reply to the
// client, kept by the answer store and `cache` alike). Upstreams are tried in the policy's order, those
// backing off after failures last, each at most once per query, within CoreDNS's 5 s or the query's
// own deadline (`cancel`), whichever comes first; one try waits at most 2 s (forward's read timeout),
// so a silent upstream leaves time for the next. No reply from any: SERVFAIL. `fallthrough` hands an
// NXDOMAIN, or a query no upstream answered, to the next plugin.

import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import type { PolicyName } from "../forward/policy.ts";
import type { TlsSettings } from "../forward/tcp-conn.ts";
import type { GrpcAddress } from "./upstream.ts";
import { failure } from "../../chain/handler.ts";
import { PluginError } from "../../chain/plugin-error.ts";
import { RCODE_TAG } from "../../chain/trace-span.ts";
import { Rcode, rcodeName } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { makePolicy } from "../forward/policy.ts";
import { FORWARD_MAX_AGE, forClient, upstreamQuery } from "../forward/relay.ts";
import { sendsName } from "../forward/upstream-options.ts";
import { GrpcUpstream } from "./upstream.ts";

export const NAME = "grpc";

export interface GrpcOptions {
  /** Canonical zone whose names are sent. */
  from: string;
  to: GrpcAddress[];
  /** Canonical names under FROM that are not sent (passed to the next plugin); FROM itself always is. */
  except: string[];
  /** TLS settings (`tls`, `tls_servername`), or undefined for cleartext HTTP/2. */
  tls: TlsSettings | undefined;
  policy: PolicyName;
  /** `fallthrough` zones (canonical), or undefined without it. */
  fallthrough: string[] | undefined;
  // Not Corefile options: CoreDNS's fixed times, lowered by tests.
  /** Longest a query may spend on all its tries (CoreDNS's 5 s). */
  deadlineMs: number;
  /** Longest one try waits for its reply. */
  tryMs: number;
}

export const GRPC_DEFAULTS = { policy: "random", deadlineMs: 5000, tryMs: 2000 } as const;

export class Grpc {
  readonly opts: GrpcOptions;
  readonly upstreams: readonly GrpcUpstream[];
  readonly #order: () => readonly GrpcUpstream[];
  readonly #log: Logger;

  constructor(opts: GrpcOptions, log: Logger) {
    this.opts = opts;
    this.#log = log;
    this.upstreams = opts.to.map((addr) => new GrpcUpstream(addr, opts.tls, log));
    this.#order = makePolicy(opts.policy, this.upstreams);
  }

  handler(next: Handler): Handler {
    return { name: NAME, serve: (req) => this.#serve(req, next) };
  }

  close(): void {
    for (const u of this.upstreams) u.close();
  }

  async #serve(req: Request, next: Handler): Promise<Msg> {
    if (!sendsName(this.opts, req.qname)) return next.serve(req);
    req.answeredBy = NAME;
    const reply = await this.#relay(req);
    const fall = this.#fallsThrough(req.qname);
    if (fall && (reply instanceof Error || reply.rcode === Rcode.NXDOMAIN)) return next.serve(req);
    if (reply instanceof Error) {
      // The SERVFAIL carries why, for the `errors` plugin (as forward's does).
      const failed = failure(req, Rcode.SERVFAIL);
      failed.error = reply;
      return failed;
    }
    req.cache.limit(FORWARD_MAX_AGE);
    req.cache.outside = true;
    return forClient(reply, req.msg);
  }

  #fallsThrough(qname: string): boolean {
    return this.opts.fallthrough?.some((z) => isSubdomain(qname, z)) ?? false;
  }

  /** The first reply an upstream gave, or why none did in time: the last try's error. */
  async #relay(req: Request): Promise<Msg | Error> {
    const order = this.#order();
    const list = [...order.filter((u) => !u.backingOff), ...order.filter((u) => u.backingOff)];
    const query = upstreamQuery(req.msg, req.upstreamOptions ?? []);
    const deadline = Math.min(Date.now() + this.opts.deadlineMs, req.deadline ?? Infinity);
    let error: Error | undefined;
    for (const u of list) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      // A traced query's try gets a span, named as CoreDNS's grpc names it, tagged as forward's.
      const span = req.span?.child("query", "client");
      span?.tag("peer.address", u.to);
      try {
        const reply = await u.exchange(query, Math.min(this.opts.tryMs, left));
        span?.tag(RCODE_TAG, rcodeName(reply.rcode));
        return reply;
      } catch (err) {
        error = err as Error;
        span?.fail(error.message);
        this.#log.debug({ err, to: u.to, qname: req.qname }, "grpc upstream did not answer");
      } finally {
        span?.end();
      }
    }
    const late = "the query's deadline passed before any upstream was tried";
    return error ?? new PluginError(NAME, "CDNS_ERR_GRPC_DEADLINE", late);
  }
}
