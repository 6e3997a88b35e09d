// ready: the readiness endpoint. GET /ready answers 200 "OK" once every registered readiness check
// passes, else 503 with the plugins still waiting, one per line; 503 from the moment shutdown begins.

import type { InstanceHooks, ReadyCheck } from "../../setup/instance.ts";
import type { Route } from "../../http/listener.ts";
import { reply } from "../../http/listener.ts";

export const READY_PATH = "/ready";

export type Monitor = "until-ready" | "continuously";

/** Names of the plugins with a check that fails, sorted. */
export function notReady(instance: InstanceHooks, passed?: WeakSet<ReadyCheck>): string[] {
  const waiting: string[] = [];
  for (const [plugin, checks] of instance.readyChecks) {
    let ok = true;
    for (const check of checks) {
      if (passed?.has(check)) continue;
      if (!check()) {
        ok = false;
        break;
      }
      passed?.add(check);
    }
    if (!ok) waiting.push(plugin);
  }
  return waiting.sort();
}

/** Lines the ready checks add to a 200 ("kubernetes: serving the snapshot ..."), or "". */
function notes(instance: InstanceHooks): string {
  let out = "";
  for (const [plugin, checks] of instance.readyChecks) {
    for (const check of checks) {
      const note = check.describe?.();
      if (note !== undefined) out += `\n${plugin}: ${note}`;
    }
  }
  return out && out + "\n";
}

/** With "until-ready" a check that passed once is not asked again (CoreDNS's default). */
export function readyRoute(instance: InstanceHooks, monitor: Monitor): Route {
  const passed = monitor === "until-ready" ? new WeakSet<ReadyCheck>() : undefined;
  return (_req, res) => {
    if (instance.stopping) {
      reply(res, 503, "Shutting down");
      return;
    }
    const waiting = notReady(instance, passed);
    if (waiting.length === 0) reply(res, 200, "OK" + notes(instance));
    // CoreDNS's body: the names joined by commas, no newline.
    else reply(res, 503, waiting.join(","));
  };
}
