// The state one running instance shares with every block's plugins (readiness, lameduck, reload): the
// server fills it (src/server/instance.ts), plugins read and set it through SetupContext.instance.

import type { Directive, Token } from "../corefile/types.ts";
import type { FileStamps } from "./file-stamps.ts";

/** Where an HTTP endpoint (health, ready, prometheus) listens, as its directive's line gives it. */
export interface HttpListen {
  readonly directive: string;
  readonly at: Directive | Token;
  /** `host` undefined: every address (dual-stack where the host has IPv6). */
  readonly addr: { readonly host: string | undefined; readonly port: number; readonly text: string };
}

/** A readiness probe a plugin registers with `ready`: true once the plugin can answer. `describe`
 * adds a line to a 200 /ready when the plugin is ready in a way an operator should know about
 * (kubernetes serving from its snapshot). */
export type ReadyCheck = (() => boolean) & { describe?: () => string | undefined };

export interface InstanceHooks {
  /** True once shutdown has begun: `ready` answers 503 from then on. */
  readonly stopping: boolean;
  /** Delay in ms between "stop requested" and listeners closing (health's lameduck). */
  lameduckMs: number;
  /** The DNS ports are shared with other processes (-reuseport, SO_REUSEPORT). */
  readonly reusePort?: boolean;
  /** Where the blocks' HTTP endpoints (health, ready, prometheus) listen, as their lines give it: the
   * server checks them against its DNS addresses once every block is set up. */
  readonly httpListens: Set<HttpListen>;
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
  /** The stamps of the files its set-up keys state by, recorded for its worker threads' set-up. */
  readonly fileStamps: FileStamps;
}

export interface ReloadSettings {
  intervalMs: number;
  jitterMs: number;
  /** The `reload` line that set them (file:line). */
  at?: string;
}
