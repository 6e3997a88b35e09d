// The search list a pod's resolv.conf has (ClusterFirst: `<ns>.svc.<zone> svc.<zone> <zone>`), found
// from the address a query came from, for autopath @kubernetes.

import type { SearchPathSource } from "../../autopath/search-path.ts";
import { join } from "../../../dns/name.ts";
import type { PodMode } from "./records.ts";
import type { StoreView } from "../store/store-view.ts";
import { normalIP } from "../model/addresses.ts";
import { OfferKey } from "../../offers.ts";

/** The key under which the kubernetes plugin offers autopath its clients' search paths. */
export const SEARCH_PATHS = new OfferKey<SearchPathSource>("kubernetes:search-paths");

export function clientSearchPaths(store: StoreView, zone: string, pods: PodMode): SearchPathSource {
  if (pods !== "verified") {
    return {
      searchPath: () => undefined,
      unusable:
        "@kubernetes needs 'pods verified' in the kubernetes block: only then are pods known by address",
    };
  }
  const svc = join("svc", zone);
  const byNamespace = new Map<string, readonly string[]>();
  return {
    searchPath(address) {
      // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d.
      const ip = normalIP(address.startsWith("::ffff:") ? address.slice(7) : address);
      const ns = ip === undefined ? undefined : store.clientNamespace(ip);
      if (ns === undefined) return undefined;
      let path = byNamespace.get(ns);
      if (path === undefined) {
        path = [join(ns, svc), svc, zone];
        byNamespace.set(ns, path);
      }
      return path;
    },
  };
}
