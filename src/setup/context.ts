// What a directive's setup gets from the server: the block it sits in and the hooks of the running
// instance (src/server/block.ts builds it).

import type { Logger } from "pino";
import type { Msg } from "../dns/message.ts";
import type { QueryDone } from "../metrics/query-done.ts";
import type { BlockSettings, ListenAddress } from "./block.ts";
import type { InstanceHooks, ReadyCheck } from "./instance.ts";

/** A question a plugin offers to warm the answer path with (SetupContext.warmUp): a name and a type. */
export type WarmQuestion = readonly [name: string, qtype: number];

/** What a directive's setup gets: the block it sits in and the hooks of the running instance. */
export interface SetupContext {
  /** The zones of the server block (canonical), in key order. */
  readonly zones: readonly string[];
  /** The folder against which relative paths in directives resolve: the Corefile's, unless the
   * block's `root` (set up before every other directive) changed it. */
  root: string;
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
  /** The `server` labels of the block's listeners (`dns://:53`), one per port and scheme: final once
   * they listen (port 0 resolved), so read them from onServing on. */
  servers(): string[];
  /** Runs at stop (and reload), in reverse order of registration. */
  onShutdown(fn: () => void | Promise<void>): void;
  /** Runs when a stop begins (SIGTERM), before lameduck; the stop waits for it. Not at a reload.
   * nodelocal waits here for the clusterdns that takes its addresses over. */
  onStopping(fn: () => Promise<void>): void;
  /** Runs each time this instance has begun to answer: at start-up once the listening hooks have run,
   * and at a reload once it has taken the old instance's place (the old one retired). Not waited for:
   * what it starts is its own to finish and to log. `on startup` runs its commands here. */
  onServing(fn: () => void): void;
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
  /** Runs the questions `questions` makes, which this block answers from memory, through its listener's fast path once
   * per thread before clients come (src/server/warm-up.ts): quietly, no hook, counter or upstream
   * sees them and their answers are dropped. Resolves once the work it caused (V8's compiles) is done;
   * wait for it before the listeners open or the readiness check passes. */
  warmUp(questions: () => Iterable<WarmQuestion>): Promise<void>;
  /** Resolves a name through the server blocks of this block's listeners (zone mux and chains), as an
   * internal query that neither reads nor fills the answer cache: for ExternalName targets and
   * autopath. `depth` counts nested lookups; past a few the reply is SERVFAIL, which stops loops.
   * `deadline` is the asking query's (Request.deadline): the lookup is abandoned with it. */
  lookup(name: string, qtype: number, depth?: number, deadline?: number): Promise<Msg>;
  /** Settings of the server block that are not handlers (bind addresses, ...). */
  readonly block: BlockSettings;
  /** The instance-wide state shared by every block (health/ready listeners, lameduck, ...). */
  readonly instance: InstanceHooks;
}
