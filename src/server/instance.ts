// One running configuration: every server block set up, grouped into listeners by port and bind
// addresses, started and stopped as a whole. A reload builds a new Instance and swaps it in.

import { warmUpOnce } from "./warm-up.ts";
import type { Logger } from "pino";
import type { Block } from "./block.ts";
import type { ServerBlock, ServerKey, Token, Transport } from "../corefile/types.ts";
import type { Handler, Plugin } from "../chain/handler.ts";
import type { HttpListen, InstanceHooks, ReadyCheck, ReloadSettings } from "../setup/instance.ts";
import type { QueryDone } from "../metrics/query-done.ts";
import type { Registry } from "../setup/registry.ts";
import type { SetupContext } from "../setup/context.ts";
import type { TcpTimeoutSettings, TlsSettings } from "../setup/block.ts";
import { endOfChain } from "../chain/handler.ts";
import { spanningNext } from "../chain/spanning-next.ts";
import { parseKey } from "../corefile/keys.ts";
import { checkDirectives, checkKeys } from "../corefile/check.ts";
import { ConfigError } from "../corefile/errors.ts";
import { checkHttpAddresses } from "./http-clash.ts";
import { memoryBudget } from "./memory-budget.ts";
import { Pipeline } from "./pipeline.ts";
import { Views } from "./views.ts";
import { WILDCARD_ADDRESSES } from "../dns/wildcard.ts";
import type { UdpListener, UdpOptions } from "./udp.ts";
import { stepGroupAside } from "./udp-aside.ts";
import { dgramEngine, type UdpEngine } from "./udp-engine.ts";
import { TcpListener, defaultTcpOptions, type TcpOptions } from "./tcp.ts";
import type { DohListener } from "./doh.ts";
import type { GrpcListener } from "./grpc.ts";
import { listenErrorText } from "../runtime/listen-error.ts";
import { Handover } from "./handover.ts";
import { FileStamps, type StampRecord } from "../setup/file-stamps.ts";
import { peerServes } from "./peer-probe.ts";
import { secureGroup, tlsKept } from "./secure.ts";
import { addressLabels, serverLabel } from "./address-labels.ts";
import { keptListeners, takeKept, type Kept } from "./kept-listeners.ts";

export interface InstanceOptions {
  blocks: ServerBlock[];
  /** The plugins there are, in execution order (src/plugins/index.ts). */
  plugins: Registry;
  /** CoreDNS's plugins clusterdns lacks (plugins/not-supported.ts), named in a start-up error. */
  notSupported?: ReadonlySet<string>;
  /** Folder that relative paths in the Corefile resolve against. */
  root: string;
  /** Port for keys that name none: 53, or -dns.port. */
  defaultPort: number;
  log: Logger;
  reusePort?: boolean;
  /** How UDP is read and sent (udp-engine.ts); dgram when not given. */
  udpEngine?: UdpEngine;
  /** A reload's new instance, set up while the old one serves (InstanceHooks.takesOver). */
  takesOver?: boolean;
  /** The running instance a reload's new one replaces: its setups adopt what it keeps (handover.ts). */
  previous?: Instance;
  /** Set up only, never started: -validate (InstanceHooks.checkOnly). */
  checkOnly?: boolean;
  /** -workers N: the DNS sockets join a SO_REUSEPORT group the worker threads' sockets share, without
   * the rest of -reuseport (its HTTP listeners and start-up waits stay those of one process). */
  shareDnsPort?: boolean;
  /** A worker thread's: UDP only, on the ports the main thread bound, by group id (what port 0 became),
   * known once it listens: the worker's start (its store's sync) waits for them only to listen; the
   * file stamps the main thread's set-up read (setup/file-stamps.ts). */
  worker?: { ports: Promise<Readonly<Record<string, number>>>; fileStamps?: StampRecord };
}

interface Group {
  /** "PORT|ADDRESSES" as configured (port 0 stays 0), "tls|..." or "https|...": what a reload matches. */
  id: string;
  transport: Transport;
  /** The certificate of a tls:// or https:// group: the first its blocks give (`tls`). */
  tls?: TlsSettings;
  /** The port as configured (0: one picked when it first listens, which `port` then holds). */
  configuredPort: number;
  port: number;
  bind: readonly string[];
  pipeline: Pipeline;
  /** Its TCP listener's limits (withTimeouts), and the timeouts its blocks set. */
  tcpOptions: TcpOptions;
  timeouts: TcpTimeoutSettings;
  udp: UdpListener[];
  /** The addresses whose UDP listeners stepped aside (udp-aside.ts), to open again. */
  aside?: string[];
  /** Plain DNS over TCP, or DNS over TLS. */
  tcp: TcpListener[];
  /** DNS over HTTPS or over gRPC. */
  doh: (DohListener | GrpcListener)[];
  /** The first key of this group, for messages. */
  key?: Token;
  /** The first key that names this group's port (`.:53` at Corefile:1), when one does; else the port
   * is the default (53 or -dns.port). Where to change the port when it cannot be opened. */
  portKey?: Token;
}

const WILDCARD = WILDCARD_ADDRESSES;

/** Views an instance can keep apart: the octet in the answer store's key (src/dns/key.ts). */
const MAX_VIEWS = 255;

export class Instance implements InstanceHooks {
  stopping = false;
  lameduckMs = 0;
  reload?: ReloadSettings;
  readonly readyChecks = new Map<string, ReadyCheck[]>();
  readonly httpListens = new Set<HttpListen>();
  readonly takesOver: boolean;
  readonly checkOnly: boolean;
  readonly fileStamps: FileStamps;
  /** start() waits for what holds the DNS sockets back (a first sync): none is open yet. */
  holding = false;
  readonly #log: Logger;
  readonly #opts: InstanceOptions;
  readonly #groups = new Map<string, Group>();
  /** Directive name -> its place in the chain. */
  readonly #rank: ReadonlyMap<string, number>;
  readonly #startup: (() => void | Promise<void>)[] = [];
  readonly #holds: (() => Promise<void>)[] = [];
  readonly #shutdown: (() => void | Promise<void>)[] = [];
  readonly #listening: (() => void | Promise<void>)[] = [];
  #abandon: ((err: Error) => void) | undefined;
  readonly #onStopping: (() => Promise<void>)[] = [];
  readonly #serving: (() => void)[] = [];
  /** A block has `debug`: the process logs at debug level while this instance runs. */
  #debug = false;
  readonly #handover: Handover;
  /** Blocks with a view so far: the last one's key octet. */
  #views = 0;
  /** What it adopted is its own: it never replaced a running instance, or has taken its place. */
  #took: boolean;

  private constructor(opts: InstanceOptions) {
    this.#opts = opts;
    this.#handover = new Handover(opts.previous && opts.previous.#handover);
    this.#took = opts.previous === undefined;
    this.#log = opts.log;
    this.takesOver = opts.takesOver ?? false;
    this.checkOnly = opts.checkOnly ?? false;
    this.fileStamps = new FileStamps(opts.worker?.fileStamps);
    this.#rank = new Map([...opts.plugins.keys()].map((name, i) => [name, i]));
    // Over the process's memory budget, the cached answers go first (they are rebuilt on demand).
    this.#unshed = memoryBudget.onShed(() => this.invalidate());
  }

  readonly #unshed: () => void;

  get reusePort(): boolean {
    return this.#opts.reusePort ?? false;
  }

  /** Sets up every block (a bad Corefile throws ConfigError here) without opening any socket. */
  static async create(opts: InstanceOptions): Promise<Instance> {
    checkDirectives(opts.blocks, opts.plugins, opts.notSupported);
    checkKeys(opts.blocks, opts.defaultPort);
    const inst = new Instance(opts);
    try {
      for (const b of opts.blocks) await inst.#setupBlock(b);
      checkHttpAddresses(inst.httpListens, inst.#groups.values());
    } catch (err) {
      // Nothing started: what the blocks before the bad one adopted goes back to the running
      // instance, and what they built is stopped.
      await inst.#handover.abort((e) => inst.#log.error({ err: e }, "shutdown hook failed"));
      throw err;
    }
    return inst;
  }

  /** How many live resources this instance took over from the one it replaced (handover.ts). */
  get adopted(): number {
    return this.#handover.adopted;
  }

  async #setupBlock(b: ServerBlock): Promise<void> {
    const keyed = b.keys.flatMap((t) => parseKey(t).map((key) => ({ key, token: t })));
    const keys = keyed.map((k) => k.key);
    const zones = [...new Set(keys.map((k) => k.zone))];
    // Handlers run in the registry's order; directives of one name keep file order (a stable sort).
    const ordered = [...b.directives].sort((x, y) => this.#rank.get(x.name)! - this.#rank.get(y.name)!);
    const directives = [...new Set(ordered.map((d) => d.name))];
    const block: Block = {
      keys,
      zones,
      chain: endOfChain,
      hooks: [],
      bind: [],
      port: keys[0].port ?? this.#opts.defaultPort,
      udpSize: undefined,
      rrl: undefined,
      directives,
      shared: new Map(),
      viewKey: 0,
    };
    const ctx: SetupContext = {
      zones,
      root: this.#opts.root,
      log: (plugin) => this.#log.child({ plugin }),
      onStartup: (fn) => this.#startup.push(fn),
      holdListeners: (wait) => this.#holds.push(wait),
      onShutdown: (fn) => this.#shutdown.push(fn),
      onStopping: (fn) => this.#onStopping.push(fn),
      onServing: (fn) => this.#serving.push(fn),
      onListening: (fn) =>
        this.#listening.push(() => {
          const g = this.#group(keys[0], block);
          return fn({ address: g.bind[0], port: g.port });
        }),
      servers: () => {
        const pipelines = new Set(keys.map((k) => this.#group(k, block).pipeline));
        return [...pipelines].flatMap((p) => [...(p.addressLabels?.values() ?? [p.label])]);
      },
      keep: (key, value, stop) => this.#handover.keep(key, value, stop),
      adopt: <T>(key: string) => this.#handover.adopt<T>(key),
      peerServes: (zone) => {
        const g = this.#group(keys[0], block);
        if (!this.reusePort || g.port === 0) return Promise.resolve(false);
        return peerServes(g.bind === WILDCARD ? "127.0.0.1" : g.bind[0], g.port, zone);
      },
      invalidate: () => this.invalidate(),
      invalidateNames: (names) => this.invalidateNames(names),
      onQueryDone: (fn: (q: QueryDone) => void) => block.hooks.push(fn),
      registerReady: (plugin, check) => {
        const list = this.readyChecks.get(plugin) ?? [];
        list.push(check);
        this.readyChecks.set(plugin, list);
      },
      warmUp: (questions) => warmUpOnce(this.#group(keys[0], block).pipeline, questions, this.#log),
      // Internal queries go to the listener of the block's first key: its zones are what it answers.
      // Resolved at call time: the bind plugin sets the block's addresses during setup.
      lookup: (name, qtype, depth = 1, deadline) =>
        this.#group(keys[0], block).pipeline.lookup(name, qtype, depth, deadline, block),
      block,
      instance: this,
    };
    const plugins: Plugin[] = [];
    for (const d of ordered) {
      const plugin = await this.#opts.plugins.get(d.name)!(d, ctx);
      if (plugin) plugins.push(plugin);
    }
    const handlers: Handler[] = [];
    // With `trace`, each handler passes on through a wrapper that opens its next one's span.
    const passOn = block.trace !== undefined ? spanningNext : (next: Handler) => next;
    block.chain = plugins.reduceRight<Handler>((next, p) => {
      const h = p(passOn(next));
      handlers.unshift(h);
      return h;
    }, endOfChain);
    if (block.debug) this.#debug = true;
    if (handlers.length > 0 && handlers[0].lane !== undefined) block.lane = handlers.map((h) => h.lane);
    if (block.view !== undefined) {
      if (this.#views === MAX_VIEWS) {
        const at = b.directives.find((d) => d.name === "view")!;
        throw new ConfigError(at.file, at.line, `view: more than ${MAX_VIEWS} views in one Corefile`);
      }
      block.viewKey = ++this.#views;
    }
    for (const { key: k, token } of keyed) {
      const g = this.#group(k, block);
      g.key ??= token;
      if (k.port !== undefined) g.portKey ??= token;
      secureGroup(g, block, token, this.#log);
      if (!g.pipeline.mux.add(k.zone, block)) this.#behind(g.pipeline.mux.get(k.zone)!, block, token);
      if (block.view !== undefined) g.pipeline.views ??= new Views(g.pipeline.mux, this.#log);
      if (block.familyKeys === true) g.pipeline.familyKeys = true;
      if (block.trace !== undefined) g.pipeline.traced = true;
      for (const h of handlers) if (h.lane?.kind === "keep") g.pipeline.answers.reserve(h.lane.rules);
      withTimeouts(g, block.timeouts);
    }
  }

  /** Puts `block` after the blocks of its zone and port already there (corefile/check.ts let it share
   * them: it has a view), where the pipeline asks it when none of them matches. */
  #behind(first: Block, block: Block, token: Token): void {
    let last = first;
    let open = first.view !== undefined;
    for (; last !== block && last.otherwise !== undefined; last = last.otherwise)
      open &&= last.otherwise.view !== undefined;
    if (last === block) return; // a key given twice
    last.otherwise = block;
    if (!open) {
      this.#log.warn(
        { at: `${token.file}:${token.line}`, zone: token.text },
        "this block is never asked: a block of the same zone and port without a view comes first and answers every query (put the blocks with a view first)",
      );
    }
  }

  #group(k: ServerKey, block: Block): Group {
    const port = k.port ?? this.#opts.defaultPort;
    const bind = block.bind.length > 0 ? [...block.bind].sort() : WILDCARD;
    const id = `${k.scheme === "dns" ? "" : `${k.scheme}|`}${port}|${bind.join(",")}`;
    let g = this.#groups.get(id);
    if (!g) {
      const label = serverLabel(k.scheme, bind === WILDCARD ? "" : bind.join(","), port);
      g = {
        id,
        transport: k.scheme,
        configuredPort: port,
        port,
        bind,
        pipeline: new Pipeline(label, this.#log),
        tcpOptions: defaultTcpOptions,
        timeouts: {},
        udp: [],
        tcp: [],
        doh: [],
      };
      this.#groups.set(id, g);
    }
    return g;
  }

  /** Drops every cached answer of every listener. */
  invalidate(): void {
    for (const g of this.#groups.values()) g.pipeline.answers.invalidate();
    this.#unshed();
  }

  /** Drops the cached answers for these owner names, in every listener. */
  invalidateNames(names: Iterable<string>): void {
    const list = [...names];
    for (const g of this.#groups.values()) g.pipeline.answers.invalidateNames(list);
  }

  /** Runs the start-up hooks, waits for what holds the listeners back (holdListeners), opens every
   * listener, then runs the listening hooks. Port 0 picks one free port per group, shared by UDP and
   * TCP on every address of the group. */
  async start(): Promise<void> {
    debugLogs(this.#log, this.#debug);
    try {
      for (const fn of this.#startup) await fn();
      this.holding = true;
      const abandoned = new Promise<never>((_, reject) => (this.#abandon = reject));
      await Promise.race([Promise.all(this.#holds.map((wait) => wait())), abandoned]);
      this.#abandon = undefined;
      this.holding = false;
      for (const g of this.#groups.values()) await this.#listen(g);
      for (const fn of this.#listening) await fn();
    } catch (err) {
      // The process exits: what start-up set up outside it (nodelocal's interface and rules) goes too,
      // as after a reload that fails.
      for (const g of this.#groups.values()) await this.#closeGroup(g);
      await this.#runShutdown();
      throw err;
    }
    for (const fn of this.#serving) fn();
  }

  /** Ends a start() that waits for its first sync (a SIGTERM then): it undoes its start-up and
   * rejects with `err`. */
  abandon(err: Error): void {
    this.#abandon?.(err);
  }

  /** -workers N: the main thread's UDP sockets step aside while it applies a backlog of watch events
   * (udp-aside.ts); `false` brings them back. True when a socket moved. */
  async stepAside(aside: boolean): Promise<boolean> {
    const open = (p: Pipeline, o: UdpOptions) =>
      (this.#opts.udpEngine ?? dgramEngine).listener(p, o, this.#log);
    let moved = false;
    for (const g of this.#groups.values())
      if (g.transport === "dns" && (await stepGroupAside(g, aside, open))) moved = true;
    return moved;
  }

  /** The port each listener group bound, by group id: what worker threads bind beside it. */
  get groupPorts(): Record<string, number> {
    return Object.fromEntries([...this.#groups].map(([id, g]) => [id, g.port]));
  }

  /** Opens the group's listeners, but for the addresses it keeps from a running instance (a reload):
   * the others then bind on the kept port. */
  async #listen(g: Group, kept?: Kept): Promise<void> {
    // A worker thread serves plain DNS over UDP; TCP, TLS and HTTPS stay on the main thread.
    if (this.#opts.worker && g.transport !== "dns") return;
    const worker = this.#opts.worker && { ports: await this.#opts.worker.ports };
    const reusePort = (this.#opts.reusePort ?? false) || (this.#opts.shareDnsPort ?? false);
    const fresh = g.bind.filter((a) => !kept?.from.has(a));
    if (kept !== undefined) g.port = kept.port;
    for (let attempt = 0; ; attempt++) {
      try {
        let port = kept?.port ?? worker?.ports[g.id] ?? g.port;
        for (const address of fresh) {
          const optional = g.bind === WILDCARD && address === "::";
          try {
            if (g.transport !== "dns") {
              port = await this.#listenSecure(g, address, port, reusePort);
              continue;
            }
            const udp = (this.#opts.udpEngine ?? dgramEngine).listener(
              g.pipeline,
              { address, port, reusePort },
              this.#log,
            );
            g.udp.push(udp);
            port = await udp.bind(address, port);
            if (worker !== undefined) continue;
            const tcp = new TcpListener(g.pipeline, g.tcpOptions, this.#log);
            g.tcp.push(tcp);
            await tcp.listen(address, port, reusePort);
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code;
            if (!optional || (code !== "EAFNOSUPPORT" && code !== "EADDRNOTAVAIL")) throw err;
            this.#log.warn({ address }, "IPv6 is not available here: listening on IPv4 only");
          }
        }
        g.port = port;
        g.pipeline.label = g.pipeline.label.replace(/:0$/, `:${port}`);
        g.pipeline.addressLabels = addressLabels(g);
        if (fresh.length > 0)
          this.#log.info({ server: g.pipeline.label, zones: g.pipeline.mux.zones }, "listening");
        return;
      } catch (err) {
        await this.#closeGroup(g);
        // With port 0, the port UDP picked may be taken for TCP: try another (a kept one stays).
        if (g.port !== 0 || attempt >= 5 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") {
          const what = g.transport === "dns" ? "udp and tcp" : `${g.transport}, tcp`;
          const on = `port ${g.port} (${what} on ${g.bind.join(", ")})`;
          const key = g.portKey;
          const otherPort = key
            ? `or change the port of '${key.text}' at ${key.file}:${key.line}`
            : "try -dns.port 1053";
          throw new Error(`cannot listen on ${on}: ${listenErrorText(err, undefined, otherPort)}`, {
            cause: err,
          });
        }
      }
    }
  }

  /** Opens a DNS over TLS or DNS over HTTPS listener of the group; the port it bound. */
  async #listenSecure(g: Group, address: string, port: number, reusePort: boolean): Promise<number> {
    if (g.transport === "tls") {
      const tcp = new TcpListener(g.pipeline, g.tcpOptions, this.#log, g.tls);
      g.tcp.push(tcp);
      return tcp.listen(address, port, reusePort);
    }
    // Imported for https:// and grpc:// blocks only: both bring node:http2, which no other block needs.
    const doh =
      g.transport === "grpc"
        ? new (await import("./grpc.ts")).GrpcListener(g.pipeline, g.tcpOptions, this.#log, g.tls)
        : new (await import("./doh.ts")).DohListener(g.pipeline, g.tcpOptions, this.#log, g.tls);
    g.doh.push(doh);
    return doh.listen(address, port, reusePort);
  }

  async #closeGroup(g: Group): Promise<void> {
    const all = [...g.udp, ...g.tcp, ...g.doh];
    await Promise.all(all.map((l) => l.close()));
    g.udp.length = 0;
    g.tcp.length = 0;
    g.doh.length = 0;
  }

  /** The pipelines of its listener groups, in Corefile order (bench/hot-path.ts drives them). */
  get pipelines(): Pipeline[] {
    return [...this.#groups.values()].map((g) => g.pipeline);
  }

  /** The ports actually bound, one per listener group, in Corefile order. */
  get ports(): number[] {
    return [...this.#groups.values()].map((g) => g.port);
  }

  /** Where each listener group answers (an address to ask: loopback for a wildcard) and its zones. */
  get listeners(): { address: string; port: number; zones: string[] }[] {
    return [...this.#groups.values()].map((g) => ({
      address: g.bind === WILDCARD ? "127.0.0.1" : g.bind[0],
      port: g.port,
      zones: g.pipeline.mux.zones,
    }));
  }

  /** Takes the place of a running instance (a reload) without dropping a query: runs this one's start-up
   * hooks, waits until its readiness checks pass so a new kubernetes store has synced (what it adopted
   * from the old one is ready at once), then moves the old listeners of every address still bound on
   * its port over to the new pipelines, whatever group they were in (kept-listeners.ts), opens the
   * listeners that are new, and retires the old instance.
   * While the old instance is ready it serves on, however long the wait; `readyWaitMs` bounds the wait
   * only while it is not (it had no synced store either). If anything fails or `signal` aborts before
   * the move, the old instance keeps serving, with what this one adopted, and the error is thrown.
   * `beforeRetire` runs once the listeners moved, while the old instance still runs (its store too). */
  async takeOver(
    old: Instance,
    o: { readyWaitMs: number; signal?: AbortSignal; beforeRetire?: () => Promise<void> },
  ): Promise<void> {
    const kept = keptListeners(old.#groups.values(), this.#groups.values());
    try {
      for (const [g, k] of kept) for (const from of new Set(k.from.values())) tlsKept(from, g);
      for (const fn of this.#startup) await fn();
      const deadline = Date.now() + o.readyWaitMs;
      while (!this.#allReady() && (old.#allReady() || Date.now() < deadline)) {
        o.signal?.throwIfAborted();
        await sleep(20);
      }
      o.signal?.throwIfAborted();
      for (const g of this.#groups.values()) await this.#listen(g, kept.get(g));
    } catch (err) {
      // What it bound anew closes; the kept listeners never left the old instance.
      for (const g of this.#groups.values()) await this.#closeGroup(g);
      await this.#runShutdown();
      throw err;
    }
    for (const [g, k] of kept) takeKept(g, k);
    this.#took = true;
    debugLogs(this.#log, this.#debug);
    await o.beforeRetire?.();
    await old.#retire();
    for (const fn of this.#serving) fn();
  }

  #allReady(): boolean {
    for (const checks of this.readyChecks.values()) if (!checks.every((c) => c())) return false;
    return true;
  }

  /** The old half of a reload: listeners not taken over close once their queries are answered. */
  async #retire(): Promise<void> {
    await this.#drain();
    for (const g of this.#groups.values()) await this.#closeGroup(g);
    await this.#runShutdown();
    // Its replies are no longer served: out of clusterdns_answer_cache_entries, and out of memory.
    for (const g of this.#groups.values()) g.pipeline.answers.invalidate();
    this.#unshed();
  }

  async #drain(): Promise<void> {
    const deadline = Date.now() + 5000;
    while ([...this.#groups.values()].some((g) => g.pipeline.inFlight > 0) && Date.now() < deadline) {
      await sleep(10);
    }
  }

  /** Runs the shutdown hooks, then stops the live resources the next instance did not adopt; those it
   * adopted from a running instance whose place it has not taken go back to that one. */
  async #runShutdown(): Promise<void> {
    const failed = (err: unknown) => this.#log.error({ err }, "shutdown hook failed");
    for (const fn of [...this.#shutdown].reverse()) {
      try {
        await fn();
      } catch (err) {
        failed(err);
      }
    }
    if (this.#took) await this.#handover.stop(failed);
    else await this.#handover.abort(failed);
  }

  /** Graceful stop: ready goes 503, lameduck keeps answering, in-flight queries finish, then close. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const fn of this.#onStopping) await fn();
    if (this.lameduckMs > 0) {
      this.#log.info({ lameduck: this.lameduckMs / 1000 }, "lameduck: still answering before shutdown");
      await sleep(this.lameduckMs);
    }
    await this.#retire();
  }
}

/** The group's TCP limits once a block's `timeouts` join them: for each limit the longest any block
 * sets (a connection is not cut earlier than one of them asked), the default where none does. */
function withTimeouts(g: Group, t: TcpTimeoutSettings | undefined): void {
  if (t === undefined) return;
  const set = g.timeouts;
  for (const k of ["readMs", "writeMs", "idleMs"] as const) {
    const ms = t[k];
    if (ms !== undefined) set[k] = Math.max(set[k] ?? 0, ms);
  }
  g.tcpOptions = { ...defaultTcpOptions, ...set };
}

/** The level each process logger had before an instance set it: what a configuration without `debug`
 * goes back to (CoreDNS's debug, too, is process-wide and undone by a reload without it). */
const baseLevels = new WeakMap<Logger, string>();

/** Sets the process's log level for a configuration with `debug` (on) or without. */
function debugLogs(log: Logger, on: boolean): void {
  if (!baseLevels.has(log)) baseLevels.set(log, log.level);
  const base = baseLevels.get(log)!;
  log.level = on && log.levels.values[base] > log.levels.values.debug ? "debug" : base;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
