// The two UDP engines: dgram (Node's own, one datagram per system call and per callback) and batched
// (the native addon of native/udp.c: recvmmsg and sendmmsg, one callback per batch of up to 64). The
// batched engine is used where its addon was built (Linux, `npm ci` with a compiler), dgram elsewhere.

import type { Logger } from "pino";
import type { UdpEngineName } from "../cli-flags.ts";
import type { Pipeline } from "./pipeline.ts";
import { DgramListener, type UdpListener, type UdpOptions } from "./udp.ts";
import { BatchedListener, loadAddon, type Addon } from "./udp-batched.ts";

export interface UdpEngine {
  name: UdpEngineName;
  /** Why the engine asked for, or the default, could not be used (a fallback to dgram). */
  fallback?: string;
  listener(pipeline: Pipeline, opts: UdpOptions, log: Logger): UdpListener;
}

export const dgramEngine: UdpEngine = {
  name: "dgram",
  listener: (pipeline, opts, log) => new DgramListener(pipeline, opts, log),
};

export class UdpEngineError extends Error {
  readonly code = "CDNS_ERR_UDP_ENGINE";
}

/** The engine for `-udp.engine` (batched when available if not given). Asking for batched where it
 * cannot run is an error; the default falls back to dgram and says why. */
export function chooseUdpEngine(asked?: UdpEngineName, load: () => Addon | Error = loadAddon): UdpEngine {
  if (asked === "dgram") return dgramEngine;
  const addon = load();
  if (addon instanceof Error) {
    if (asked === "batched") throw new UdpEngineError(`-udp.engine batched: ${addon.message}`);
    return { ...dgramEngine, fallback: addon.message };
  }
  return {
    name: "batched",
    listener: (pipeline, opts, log) => new BatchedListener(addon, pipeline, opts, log),
  };
}
