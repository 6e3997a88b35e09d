// The Pods watch that attribution reads: one reflector (the kubernetes plugin's list/watch loop,
// kubernetes/api/) filling Workloads. Its cost on the API is one more LIST and WATCH of every pod,
// the same as `pods verified` adds (docs/insights.md has the figures).

import type { Logger } from "pino";
import type { ClientOptions } from "../kubernetes/api/api.ts";
import { createClient } from "../kubernetes/api/client.ts";
import { Reflector } from "../kubernetes/api/reflector.ts";
import type { Workloads } from "./workloads.ts";

export interface PodWatch {
  start(): void;
  stop(): Promise<void>;
}

/** Watches pods into `workloads`. Named connection settings that do not work fail here (setup); with
 * none named and no cluster found, clients stay unattributed and one line says so. */
export function watchPods(workloads: Workloads, api: ClientOptions, log: Logger): PodWatch {
  const named = api.kubeconfig !== undefined || api.endpoint !== undefined;
  let client;
  try {
    client = createClient(api);
  } catch (err) {
    if (named) throw err;
    log.warn({ err: (err as Error).message }, "no Kubernetes API found: clients are not attributed to pods");
    return { start: () => {}, stop: () => Promise.resolve() };
  }
  const reflector = new Reflector({ client, kind: "pods", sink: workloads, log });
  return {
    start: () => reflector.start(),
    stop: () => reflector.stop(),
  };
}
