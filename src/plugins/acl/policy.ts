// What one acl decides for a query: the rules of every acl directive of a server block, in Corefile
// order. A directive whose zones hold the name checks its policies in order and the first that matches
// the query's type and the client's address decides; `allow` ends the check, no match goes on to the
// next directive, and a query no policy matched is allowed (CoreDNS's acl).

import type { NetSet } from "../../dns/nets.ts";
import { isSubdomain } from "../../dns/name.ts";

export type Action = "allow" | "block" | "filter" | "drop";

export interface Policy {
  action: Action;
  /** Query types it applies to; undefined for every type (`*`). */
  types: ReadonlySet<number> | undefined;
  /** Client networks it applies to; undefined for every address (`*`). */
  nets: NetSet | undefined;
}

/** One acl directive. */
export interface Rule {
  zones: readonly string[];
  policies: readonly Policy[];
}

export interface Decision {
  action: Action;
  /** The rule's zone that held the name ("" when no rule did). */
  zone: string;
  /** Another client could get another action for this question: the reply must not be replayed. */
  bySource: boolean;
}

export function decide(rules: readonly Rule[], qname: string, qtype: number, address: string): Decision {
  let bySource = false;
  let zone = "";
  for (const rule of rules) {
    const z = rule.zones.find((x) => isSubdomain(qname, x));
    if (z === undefined) continue;
    zone ||= z;
    for (const p of rule.policies) {
      if (p.types !== undefined && !p.types.has(qtype)) continue;
      if (p.nets !== undefined) {
        bySource = true;
        if (!p.nets.has(address)) continue;
      }
      return { action: p.action, zone: z, bySource };
    }
  }
  return { action: "allow", zone, bySource };
}
