// The zones of a plugin that answers from the kubernetes store (kubernetes, k8s_external): which one
// holds a name, and the primary one, where PTR targets and the name server's name live.

import { isSubdomain } from "../../../dns/name.ts";

export function isReverseZone(zone: string): boolean {
  return zone.endsWith("in-addr.arpa.") || zone.endsWith("ip6.arpa.");
}

export class Zones {
  /** The first forward zone `primaryOf` accepts. */
  readonly primary: string;
  /** Longest first, so the first match is the most specific zone. */
  readonly #longestFirst: readonly string[];

  /** `zones` are canonical; without a forward zone `primaryOf` accepts, throws, naming `plugin`. */
  constructor(zones: readonly string[], plugin: string, primaryOf: (zone: string) => boolean = () => true) {
    this.#longestFirst = [...zones].sort((a, b) => b.length - a.length);
    const primary = zones.find((z) => !isReverseZone(z) && primaryOf(z));
    if (primary === undefined) throw new Error(`${plugin} needs a zone that is not a reverse zone`);
    this.primary = primary;
  }

  /** The zone that holds `qname` (the most specific), or undefined. */
  zoneOf(qname: string): string | undefined {
    for (const z of this.#longestFirst) if (isSubdomain(qname, z)) return z;
    return undefined;
  }
}
