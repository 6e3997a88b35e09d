// What the kubernetes plugin offers the k8s_external plugin of its server block, after CoreDNS's
// Externaler: the services and endpoints of the exposed namespaces, the services that publish an
// external address or select this server, the hold until the first sync, and the names k8s_external
// publishes for the store's (a view, so a change drops them from the answer cache too).

import type { StartupGate } from "./sync/startup-gate.ts";
import type { Store } from "./store/store.ts";
import type { EndpointGroup, Service } from "./model/slim-types.ts";
import type { NameView } from "./store/pending-changes.ts";
import { OfferKey } from "../offers.ts";

export interface Externaler {
  /** Holds queries until the first sync or the startup deadline. */
  readonly gate: StartupGate;
  /** This server's own addresses: the name servers' last resort, as in CoreDNS. */
  readonly localIPs: readonly string[];
  /** Date.now() of the last change that altered an answer: the SOA serial. */
  readonly modified: number;
  namespaceExposed(ns: string): boolean;
  service(ns: string, name: string): Service | undefined;
  /** The endpoints a service publishes (kubernetes/store.ts). */
  endpoints(svc: Service): readonly EndpointGroup[];
  /** The services publishing this external address, in exposed namespaces. */
  externalServices(ip: string): Service[];
  /** The services that select this server's own pod. */
  localServices(): Service[];
  /** Publishes the store's names under other zones too: see NameView. */
  addView(view: NameView): void;
  /** One question's reads on one view of the store (Store.read); undefined where it cannot change. */
  readonly read: (<T>(fn: () => T) => T) | undefined;
}

/** The key of the kubernetes plugin's Externaler. */
export const EXTERNALER = new OfferKey<Externaler>("kubernetes:external");

/** The store's Externaler. */
export function externaler(store: Store, gate: StartupGate, localIPs: readonly string[]): Externaler {
  return {
    gate,
    localIPs,
    get modified() {
      return store.modified;
    },
    namespaceExposed: (ns) => store.namespaceExposed(ns),
    service: (ns, name) => store.service(ns, name),
    endpoints: (svc) => store.endpoints(svc),
    externalServices: (ip) => store.externalServices(ip),
    localServices: () => store.localServices(),
    addView: (view) => store.addView(view),
    read: store.read,
  };
}
