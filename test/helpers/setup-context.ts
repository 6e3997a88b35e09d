// A SetupContext for calling a plugin's setup directly: it records start-up and shutdown hooks,
// invalidations, log lines and readiness checks, and parses directives from Corefile text.

import { pino } from "pino";
import type { Directive } from "../../src/corefile/types.ts";
import type { Msg } from "../../src/dns/message.ts";
import type { ListenAddress } from "../../src/setup/block.ts";
import type { QueryDone } from "../../src/metrics/query-done.ts";
import type { ReadyCheck } from "../../src/setup/instance.ts";
import type { ListenArgument } from "../../src/http/listener.ts";
import type { SetupContext } from "../../src/setup/context.ts";
import { replyTo } from "../../src/dns/message.ts";
import { Rcode } from "../../src/dns/constants.ts";
import { queryMsg } from "./query-msg.ts";
import { FileStamps } from "../../src/setup/file-stamps.ts";

export interface FakeContextOptions {
  zones?: string[];
  root?: string;
  /** Answers ctx.lookup; by default every lookup is SERVFAIL. */
  lookup?: (name: string, qtype: number, depth?: number) => Promise<Msg>;
  /** Set up as a reload's new instance (ctx.instance.takesOver). */
  takesOver?: boolean;
}

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface FakeContext {
  ctx: SetupContext;
  logs: LogLine[];
  invalidations: number;
  invalidatedNames: string[];
  queryDone: ((q: QueryDone) => void)[];
  readyChecks: Map<string, ReadyCheck[]>;
  /** The hooks registered with onStartup and onShutdown, in registration order. */
  startup: (() => void | Promise<void>)[];
  shutdown: (() => void | Promise<void>)[];
  /** The hooks registered with onStopping. */
  stopping: (() => Promise<void>)[];
  /** The hooks registered with onServing. */
  serving: (() => void)[];
  /** The waits registered with holdListeners. */
  holds: (() => Promise<void>)[];
  /** The hooks registered with onListening, in registration order. */
  listening: ((at: ListenAddress) => void | Promise<void>)[];
  instance: {
    stopping: boolean;
    lameduckMs: number;
    readyChecks: Map<string, ReadyCheck[]>;
    takesOver: boolean;
  };
  /** Runs the start-up hooks in order, then waits for every hold on the listeners. */
  start(): Promise<void>;
  /** Runs the shutdown hooks in reverse order, then stops what was kept (ctx.keep). */
  stop(): Promise<void>;
  /** Runs the listening hooks in order, as if the block's listener were open at `at`. */
  listen(at: ListenAddress): Promise<void>;
  /** True when every registered readiness check passes. */
  ready(): boolean;
}

export function fakeContext(o: FakeContextOptions = {}): FakeContext {
  const startup: (() => void | Promise<void>)[] = [];
  const shutdown: (() => void | Promise<void>)[] = [];
  const stopping: (() => Promise<void>)[] = [];
  const serving: (() => void)[] = [];
  const listening: ((at: ListenAddress) => void | Promise<void>)[] = [];
  const holds: (() => Promise<void>)[] = [];
  const kept: (() => void | Promise<void>)[] = [];
  const readyChecks = new Map<string, ReadyCheck[]>();
  const instance = {
    stopping: false,
    lameduckMs: 0,
    readyChecks,
    httpListens: new Set<ListenArgument>(),
    takesOver: o.takesOver ?? false,
    fileStamps: new FileStamps(),
  };
  const f: FakeContext = {
    logs: [],
    invalidations: 0,
    invalidatedNames: [],
    queryDone: [],
    readyChecks,
    startup,
    shutdown,
    stopping,
    serving,
    listening,
    holds,
    instance,
    ctx: undefined as unknown as SetupContext,
    async start() {
      for (const fn of startup) await fn();
      await Promise.all(holds.map((wait) => wait()));
    },
    async stop() {
      for (const fn of [...shutdown].reverse()) await fn();
      for (const fn of [...kept].reverse()) await fn();
    },
    async listen(at) {
      for (const fn of listening) await fn(at);
    },
    ready() {
      for (const checks of readyChecks.values()) for (const c of checks) if (!c()) return false;
      return true;
    },
  };
  const logger = pino({ level: "debug" }, { write: (line: string) => void f.logs.push(JSON.parse(line)) });
  f.ctx = {
    zones: o.zones ?? ["."],
    root: o.root ?? process.cwd(),
    log: (plugin) => logger.child({ plugin }),
    onStartup: (fn) => void startup.push(fn),
    onShutdown: (fn) => void shutdown.push(fn),
    onStopping: (fn) => void stopping.push(fn),
    onServing: (fn) => void serving.push(fn),
    onListening: (fn) => void listening.push(fn),
    holdListeners: (wait) => void holds.push(wait),
    servers: () => ["dns://:53"],
    // Nothing to adopt from: what is kept stops after the shutdown hooks.
    keep: (_key, _value, stop) => void kept.push(stop),
    adopt: () => undefined,
    peerServes: () => Promise.resolve(false),
    invalidate: () => void f.invalidations++,
    invalidateNames: (names) => void f.invalidatedNames.push(...names),
    onQueryDone: (fn) => void f.queryDone.push(fn),
    warmUp: () => Promise.resolve(),
    registerReady: (plugin, check) => readyChecks.set(plugin, [...(readyChecks.get(plugin) ?? []), check]),
    lookup:
      o.lookup ??
      ((name, qtype) =>
        Promise.resolve(replyTo(queryMsg(name, qtype, { id: 0, rd: false }), Rcode.SERVFAIL))),
    block: { bind: [], directives: [], shared: new Map() },
    instance,
  };
  return f;
}

/** A directive as the parser makes it, from its name, argument words and optional nested block. */
export function directive(name: string, args: string[] = [], block?: Directive[], line = 3): Directive {
  return {
    name,
    args: args.map((text) => ({ text, file: "Corefile", line, quoted: false })),
    block,
    file: "Corefile",
    line,
  };
}
