// The search list a pod's resolv.conf has (ClusterFirst: `<ns>.svc.<zone> svc.<zone> <zone>`), found
// from the address a query came from, for autopath @kubernetes.

import type { SearchPathSource } from "../../autopath/search-path.ts";
import { isSubdomain, join } from "../../../dns/name.ts";
import type { PodMode } from "./records.ts";
import type { StoreView } from "../store/store-view.ts";
import { normalIP } from "../model/addresses.ts";
import { OfferKey } from "../../offers.ts";

/** The key under which the kubernetes plugin offers autopath its clients' search paths. */
export const SEARCH_PATHS = new OfferKey<SearchPathSource>("kubernetes:search-paths");

/** `zones`: the block's cluster zones (forward, not multicluster), the primary first. A query gets the
 * path of the one it is in, as CoreDNS's: a pod whose kubelet names another of them (a cluster domain
 * being renamed) searches that zone. */
export function clientSearchPaths(
  store: StoreView,
  zones: readonly string[],
  pods: PodMode,
): SearchPathSource {
  if (pods !== "verified") {
    return {
      searchPath: () => undefined,
      unusable:
        "@kubernetes needs 'pods verified' in the kubernetes block: only then are pods known by address",
    };
  }
  const longestFirst = [...zones].sort((a, b) => b.length - a.length);
  const paths = new Map<string, readonly string[]>();
  return {
    searchPath(address, qname) {
      // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d.
      const ip = normalIP(address.startsWith("::ffff:") ? address.slice(7) : address);
      const ns = ip === undefined ? undefined : store.clientNamespace(ip);
      if (ns === undefined) return undefined;
      const zone = longestFirst.find((z) => isSubdomain(qname, z)) ?? zones[0];
      const key = `${ns} ${zone}`;
      let path = paths.get(key);
      if (path === undefined) {
        const svc = join("svc", zone);
        path = [join(ns, svc), svc, zone];
        paths.set(key, path);
      }
      return path;
    },
  };
}
