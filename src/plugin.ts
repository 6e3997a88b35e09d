// The contract every plugin implements, after CoreDNS's plugin.Handler: a handler answers, passes the
// query to the next handler, or returns an error rcode. A plugin is a function from "next" to handler;
// the chain order comes from the registry (src/plugins/index.ts), never from the Corefile.
//
// Unlike CoreDNS, a handler returns the reply instead of writing it to a ResponseWriter: the cache,
// autopath and the log/metrics hook then see the reply as a value, with no writer wrappers needed.

import type { Logger } from "pino";
import type { Directive } from "./corefile/types.ts";
import type { Msg } from "./dns/message.ts";
import type { Scanned } from "./dns/scan.ts";
import { replyTo } from "./dns/message.ts";
import { Class, Rcode } from "./dns/constants.ts";
import type { AnswerPolicy, CacheRules } from "./answers/policy.ts";

// The answer store's contract (src/answers/policy.ts), re-exported for plugins.
export {
  AnswerPolicy,
  SHUFFLED_REPLAY_SECONDS,
  cacheClock,
  type CacheCounters,
  type CacheKind,
  type CacheRules,
  type KeepTerms,
  type PrefetchRule,
  type StoredAnswer,
} from "./answers/policy.ts";

export interface Request {
  /** The decoded query. `msg.question[0].name` is canonical (lowercase, absolute). */
  readonly msg: Msg;
  readonly qname: string;
  /** The question name as the client spelled it, when that is not `qname` (0x20 mixed case); for
   * names a plugin writes in rdata, which compression cannot give the client's spelling. A request a
   * plugin derives for another name (rewrite) may carry the original's: check it spells `qname`. */
  readonly spelled?: string;
  readonly qtype: number;
  readonly qclass: number;
  /** The server block zone that matched (longest suffix). */
  readonly zone: string;
  readonly proto: "udp" | "tcp";
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly localPort: number;
  /** "dns://:53": the server this query reached, as CoreDNS labels it in metrics. */
  readonly server: string;
  /** Largest reply this client takes over this transport (65535 for TCP). */
  readonly maxSize: number;
  /** The answer store as this query sees it: how the reply may be kept (set by the plugins that know)
   * and, for `cache`, the entry the fast path could not replay and a way to refresh it. A request a
   * plugin derives from this one (rewrite) shares the object, so what the inner plugins decide reaches
   * the pipeline. */
  readonly cache: AnswerPolicy<Request>;
  /** Which plugin produced the reply (for metrics' `plugin` label), set by whoever answers. */
  answeredBy?: string;
  /** EDNS options to send upstream with this query (rewrite's edns0 rules): forward puts them in its
   * own OPT record. The client's own options (its cookie, padding) never leave the server. */
  upstreamOptions?: readonly { code: number; data: Uint8Array }[];
  /** Set by a plugin that leaves the query unanswered (acl's drop): the server sends nothing, stores
   * nothing and runs no finish hooks. Only on the client's own request (plugins before rewrite). */
  noReply?: boolean;
  /** How many internal lookups (SetupContext.lookup) led to this request: 0 for a client's query. */
  readonly depth?: number;
  /** TCP only (undefined over UDP and for internal lookups): sends one message of a reply that takes
   * several (a zone transfer), ahead of the message the handler returns, which goes out last. The
   * server gives it the query's ID and question as it does the returned one. Resolves once the socket
   * can take more, after a turn of the event loop, so a long stream neither fills memory nor holds up
   * other queries; resolves false when the client is gone, and the handler should then stop. */
  readonly stream?: (msg: Msg) => Promise<boolean>;
}

export interface Handler {
  readonly name: string;
  serve(req: Request): Promise<Msg>;
  /** What the handler does in the wire lane (src/answers/lane.ts): the synchronous path that answers
   * a query the answer store misses without a Request, a promise or a decoded query. A handler
   * without one ends the lane there (the query takes the chain). */
  readonly lane?: LaneStep;
}

/** A query as the wire lane shows it to handlers: one object, refilled for every query (do not keep). */
export interface LaneQuery {
  /** Canonical (lowercase, absolute). */
  readonly qname: string;
  readonly qtype: number;
  readonly qclass: number;
  /** The name as the client spelled it, when that is not `qname` (0x20 mixed case), as Request.spelled. */
  readonly spelled: string | undefined;
  /** The query carries the EDNS option `code`. */
  option(code: number): boolean;
  /** "dns://:53": the server this query reached. */
  readonly server: string;
}

/** The reply a lane answer writes: a message refilled for every query (its question, ID and flags are
 * the server's to set), whether the plugin invalidates it on change (AnswerPolicy.stable), and which
 * plugin answered. Sections may be the plugin's own arrays: the lane only reads them. */
export interface LaneReply {
  readonly msg: Msg;
  stable: boolean;
  plugin: string;
}

export const LaneResult = {
  /** Not this handler's query: the next one in the lane. */
  next: 0,
  /** The handler must see this query as a Request (the chain). */
  chain: 1,
  /** Answered into the LaneReply. */
  answered: 2,
} as const;
export type LaneResult = (typeof LaneResult)[keyof typeof LaneResult];

/** The lane step of a handler that passes every query through and leaves every reply alone. */
export const PASS_ALL: LaneStep = { kind: "pass", passes: () => true };

export type LaneStep =
  /** Lets the query through and leaves the reply as it is when passes() says so; else the lane stops. */
  | { readonly kind: "pass"; passes(q: LaneQuery): boolean }
  /** loadbalance's round robin: the store rotates address answers on every replay; a reply it
   * cannot rotate is shuffled by shuffle() and replayed in that order for a second. */
  | { readonly kind: "rotate"; shuffle(m: Msg): void }
  /** `cache`: what the handlers after it answer is kept by its rules, and refilled from what they
   * answered before. */
  | { readonly kind: "keep"; readonly rules: CacheRules }
  | { readonly kind: "answer"; answer(q: LaneQuery, reply: LaneReply): LaneResult };

export type Plugin = (next: Handler) => Handler;

/** For a directive whose every line in a server block joins one list that one handler serves
 * (rewrite's rules, template's templates, acl's rules): the first line's setup makes the handler over
 * the list, later lines only add to it. `lists` is the plugin's, keyed by the block. */
export function joinInBlock<T>(
  lists: WeakMap<object, T[]>,
  block: object,
  item: T,
  handler: (list: readonly T[]) => Plugin,
): Plugin | undefined {
  const list = lists.get(block);
  if (list) {
    list.push(item);
    return undefined;
  }
  const first = [item];
  lists.set(block, first);
  return handler(first);
}

/** A reply with only an rcode: what a plugin returns to fail a query (SERVFAIL, REFUSED, ...). */
export function failure(req: Request, rcode: number): Msg {
  return replyTo(req.msg, rcode);
}

/** The end of every chain: nothing handled the query. CoreDNS answers SERVFAIL here too; a query of
 * a class other than IN (or ANY) that no plugin answered gets REFUSED: there is no data of that class
 * here, which is no failure of the server (resolvers count a SERVFAIL against it). */
export const endOfChain: Handler = {
  name: "end",
  serve(req) {
    const served = req.qclass === Class.IN || req.qclass === Class.ANY;
    return Promise.resolve(failure(req, served ? Rcode.SERVFAIL : Rcode.REFUSED));
  },
};

/** True for the rcodes that mean "this plugin could not answer" rather than a real answer. */
export function isFailureRcode(rcode: number): boolean {
  return (
    rcode === Rcode.SERVFAIL || rcode === Rcode.REFUSED || rcode === Rcode.FORMERR || rcode === Rcode.NOTIMP
  );
}

/** An error a plugin throws at query time; `errors` logs it, the server answers SERVFAIL. */
export class PluginError extends Error {
  readonly code: string;
  readonly plugin: string;
  constructor(plugin: string, code: string, message: string, options?: { cause?: unknown }) {
    super(`${plugin}: ${message}`, options);
    this.name = "PluginError";
    this.plugin = plugin;
    this.code = code;
  }
}

/** What the finish hooks see of one answered query. Built once per query; do not keep it. */
export interface QueryDone {
  server: string;
  zone: string;
  proto: "udp" | "tcp";
  remoteAddress: string;
  remotePort: number;
  id: number;
  /** Canonical (lowercase, absolute) query name. */
  qname: string;
  qtype: number;
  qclass: number;
  /** Size of the query in bytes. */
  size: number;
  do: boolean;
  /** The client's EDNS buffer size, or 512 without EDNS. */
  bufsize: number;
  rcode: number;
  /** Header flags of the reply as dig prints them: "qr,aa,rd". */
  readonly rflags: string;
  /** Size of the reply in bytes, after truncation. */
  rsize: number;
  /** Time from the packet's arrival to the reply being handed to the socket, in seconds. */
  readonly duration: number;
  /** The same in whole microseconds: a small integer, which metrics take without allocating. */
  micros: number;
  /** True when the reply came from the answer cache (the fast path). */
  cached: boolean;
  /** The plugin that produced the reply, also when replayed from the answer cache ("" if unknown). */
  plugin: string;
}

/** A readiness probe a plugin registers with `ready`: true once the plugin can answer. `describe`
 * adds a line to a 200 /ready when the plugin is ready in a way an operator should know about
 * (kubernetes serving from its snapshot). */
export type ReadyCheck = (() => boolean) & { describe?: () => string | undefined };

/** What a directive's setup gets: the block it sits in and the hooks of the running instance. */
export interface SetupContext {
  /** The zones of the server block (canonical), in key order. */
  readonly zones: readonly string[];
  /** The folder of the Corefile, against which relative paths in directives resolve. */
  readonly root: string;
  /** A pino logger for this plugin: `{ plugin: name }` bound once. */
  log(plugin: string): Logger;
  /** Runs when the instance starts, before listeners open; a rejection aborts start-up. */
  onStartup(fn: () => void | Promise<void>): void;
  /** Holds the DNS listeners back at start-up until `wait` settles: run once every start-up hook has,
   * the waits of all blocks at once. kubernetes holds them until its first sync (startup_timeout at
   * most), so that a process joins a port it shares (-reuseport) only when it can answer. A reload's
   * new instance takes the open listeners over once ready, and does not run these. */
  holdListeners(wait: () => Promise<void>): void;
  /** Runs once every listener is open at start-up (not after a reload, which keeps its listeners),
   * with the address and port of the block's first key. A rejection fails start-up: the server exits
   * non-zero. For checks that need the server reachable (loop's forwarding-loop probe). */
  onListening(fn: (at: ListenAddress) => void | Promise<void>): void;
  /** Runs at stop (and reload), in reverse order of registration. */
  onShutdown(fn: () => void | Promise<void>): void;
  /** Runs when a stop begins (SIGTERM), before lameduck; the stop waits for it. Not at a reload.
   * nodelocal waits here for the clusterdns that takes its addresses over. */
  onStopping(fn: () => Promise<void>): void;
  /** Keeps a live resource for a reload (src/server/handover.ts): the next instance's setup that asks
   * for the same `key` with adopt() gets `value` instead of building it again. The key must spell out
   * everything the resource depends on. `stop` runs when this instance stops (after the onShutdown
   * hooks) unless a next instance adopted it. */
  keep(key: string, value: unknown, stop: () => void | Promise<void>): void;
  /** In a reload's new instance, the value the running instance keeps under `key` (see keep), now
   * this instance's to stop; undefined when there is none (at start-up, always). */
  adopt<T>(key: string): T | undefined;
  /** With -reuseport, before this process listens: whether another process answers `zone` on the
   * block's port (it is already serving it); false without -reuseport. kubernetes waits for its sync
   * past startup_timeout while one does, instead of taking a share of the port to answer SERVFAIL. */
  peerServes(zone: string): Promise<boolean>;
  /** Drops every entry of the answer cache: call whenever the data behind answers changes. */
  invalidate(): void;
  /** Drops the answer-cache entries of these canonical owner names only (every type): for plugins that
   * know exactly which names a change touched. Names that newly exist or vanish must be listed too. */
  invalidateNames(names: Iterable<string>): void;
  /** Runs after every query this server block answered, fast path included: the one place for logs
   * and metrics (after Knot Resolver's "finish" layer). Must be cheap and must not throw. */
  onQueryDone(fn: (q: QueryDone) => void): void;
  /** Registers a readiness check for `ready`. */
  registerReady(plugin: string, check: ReadyCheck): void;
  /** Resolves a name through the server blocks of this block's listeners (zone mux and chains), as an
   * internal query that neither reads nor fills the answer cache: for ExternalName targets and
   * autopath. `depth` counts nested lookups; past a few the reply is SERVFAIL, which stops loops. */
  lookup(name: string, qtype: number, depth?: number): Promise<Msg>;
  /** Settings of the server block that are not handlers (bind addresses, ...). */
  readonly block: BlockSettings;
  /** The instance-wide state shared by every block (health/ready listeners, lameduck, ...). */
  readonly instance: InstanceHooks;
}

/** What the pipeline asks of a block's response-rate limit (`rrl`) for each UDP reply, the fast path's
 * too: the reply to send (itself, or a shorter one), or undefined to send nothing. */
export interface ReplyLimiter {
  limit(reply: Buffer, query: Scanned, remoteAddress: string, now: number): Buffer | undefined;
}

/** `timeouts`: for TCP connections, ms from connecting until the first query is whole (read), that a
 * reply may wait for the client to take it (write), and from one reply until the next query is whole
 * (idle). */
export interface TcpTimeoutSettings {
  readMs?: number;
  writeMs?: number;
  idleMs?: number;
}

/** Where a block's listener is bound: a wildcard bind is "0.0.0.0" or "::". */
export interface ListenAddress {
  address: string;
  port: number;
}

export interface BlockSettings {
  /** Addresses to listen on; empty means all (0.0.0.0 and ::). Filled by `bind`. */
  bind: string[];
  /** The DNS port of the block's first key as configured: its own, else 53 or -dns.port (0: a free
   * one, picked when the listener opens). Unset outside a server (tests). */
  readonly port?: number;
  /** Largest UDP reply this block sends, whatever the client's EDNS size (`bufsize`); undefined for
   * the client's size up to EDNS_UDP_SIZE. */
  udpSize?: number;
  /** TCP time limits in ms, from `timeouts`; unset ones keep the server's defaults. */
  timeouts?: TcpTimeoutSettings;
  /** The response-rate limit of the block's UDP replies, from `rrl`. */
  rrl?: ReplyLimiter;
  /** The block's directive names, in execution order. */
  readonly directives: readonly string[];
  /** What a block's plugins offer each other, by name: kubernetes offers its client search paths
   * here for autopath. Filled during setup, so read it at start-up (plugins set up in chain order). */
  readonly shared: Map<string, unknown>;
}

export interface InstanceHooks {
  /** True once shutdown has begun: `ready` answers 503 from then on. */
  readonly stopping: boolean;
  /** Delay in ms between "stop requested" and listeners closing (health's lameduck). */
  lameduckMs: number;
  /** The DNS ports are shared with other processes (-reuseport, SO_REUSEPORT). */
  readonly reusePort?: boolean;
  /** Every readiness check registered by any block. */
  readonly readyChecks: Map<string, ReadyCheck[]>;
  /** Set by `reload`: how often the Corefile is checked for changes. */
  reload?: ReloadSettings;
  /** True for a reload's new instance: it starts while the old one answers queries, so its start-up
   * must not stop the process (no compacting collection after a sync). */
  readonly takesOver: boolean;
  /** True when the configuration is only checked (-validate), never started: a plugin checks what the
   * Corefile names, not what only the running environment has (a pod's service account). */
  readonly checkOnly?: boolean;
}

export interface ReloadSettings {
  intervalMs: number;
  jitterMs: number;
}

/** What src/plugins/<name>/setup.ts exports as `setup`. Returns undefined for directives that only
 * configure the server (bind, health, ready) and add no handler. */
export type Setup = (d: Directive, ctx: SetupContext) => Plugin | undefined | Promise<Plugin | undefined>;

/** Directive name -> setup, for every plugin a server can set up, in execution order: a query passes
 * through a block's handlers in the registry's order, whatever order the Corefile lists them in. A
 * directive the registry does not hold is an unknown directive. */
export type Registry = ReadonlyMap<string, Setup>;
