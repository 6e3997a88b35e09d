// The answers below `svc.<zone>` of a multicluster zone (clusterset.local), from ServiceImports: what
// a name holds is names/import-names.ts's. No PTR records (2.3.3, 2.4.3) and no pod records there.

import type { RR } from "../../../dns/message.ts";
import { join } from "../../../dns/name.ts";
import type { Multicluster } from "../store/multicluster.ts";
import { importNames } from "../names/import-names.ts";
import { holdingRecords } from "./record-sets.ts";

/** The schema version of the multicluster specification, for dns-version.<zone> (its section 2.2). */
export const MCS_SCHEMA_VERSION = "1.0.0";

/** What a name holds (records.ts's Node). */
export interface McsNode {
  rrs: RR[];
  additional?: RR[];
}

/** A question below `svc.<zone>` of a multicluster zone: `labels` are qname's below the zone,
 * `[..., service, namespace, "svc"]`; `withSrv`: SRV records are wanted at the import's name; their
 * targets keep `spelled`, the client's spelling of the zone, as in the cluster's zone. */
export interface McsQuestion {
  readonly qname: string;
  readonly labels: readonly string[];
  readonly withSrv: boolean;
  readonly spelled: string;
}

/**
 * The node of the question `q`; undefined when it does not exist. `exposed(ns)`: whether the
 * namespace exists locally (it also exists in the zone when it has imports).
 */
export function multiclusterNode(
  mc: Multicluster,
  q: McsQuestion,
  ttl: number,
  exposed: (ns: string) => boolean,
): McsNode | undefined {
  const { qname, labels, withSrv, spelled } = q;
  const n = labels.length;
  const ns = labels[n - 2];
  if (n === 2) return exposed(ns) || mc.hasNamespace(ns) ? { rrs: [] } : undefined;
  const imp = mc.import(ns, labels[n - 3]);
  if (imp === undefined) return undefined;
  const h = importNames.holding({ imp, groups: mc.endpoints(imp), withSrv }, labels.slice(0, n - 3));
  if (h === undefined) return undefined;
  const rel = `${imp.name}.${imp.ns}.svc`;
  return holdingRecords(qname, h, (host) => join(host === undefined ? rel : `${host}.${rel}`, spelled), ttl);
}
