// What the kubernetes plugin offers the k8s_external plugin of its server block, through
// SetupContext.block.shared: its store (services, endpoints, external addresses, the services that
// select this server), the hold until the first sync, and this server's own addresses.

import type { StartupGate } from "./startup-gate.ts";
import type { Store } from "./store.ts";

/** The key of the offer in SetupContext.block.shared. */
export const EXTERNAL_OFFER = "kubernetes:external";

export interface ExternalOffer {
  readonly store: Store;
  readonly gate: StartupGate;
  readonly localIPs: readonly string[];
}
