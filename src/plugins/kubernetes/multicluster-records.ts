// The names below `svc.<zone>` of a multicluster zone (clusterset.local), from ServiceImports, as the
// Kubernetes DNS-Based Multicluster Service Discovery specification (KEP-1645's specification.md,
// schema 1.0.0) has them:
//   <svc>.<ns>.svc.<zone>                   A/AAAA: a ClusterSetIP import's spec.ips (2.3.1); a
//                                           headless import's ready endpoints in every cluster (2.4.1)
//   _<port>._<proto>.<svc>.<ns>.svc.<zone>  SRV per named port: to the service name (2.3.2); to each
//                                           ready endpoint's per-cluster name (2.4.2)
//   <host>.<clusterid>.<svc>.<ns>.svc.<zone> A/AAAA: a headless import's endpoint in one cluster (2.4.1)
// No PTR records (2.3.3, 2.4.3), and no record for `<clusterid>.<svc>...` itself (2.3.4, 2.4.4): above
// a headless import's endpoint names it is an empty non-terminal (NODATA), else NXDOMAIN.

import type { RR } from "../../dns/message.ts";
import { Class, Type } from "../../dns/constants.ts";
import { join } from "../../dns/name.ts";
import type { ClusterGroup, Multicluster, ServiceImport } from "./multicluster.ts";

/** The schema version of the multicluster specification, for dns-version.<zone> (its section 2.2). */
export const MCS_SCHEMA_VERSION = "1.0.0";

/** What a name holds (records.ts's Node). */
export interface McsNode {
  rrs: RR[];
  additional?: RR[];
}

const EMPTY: McsNode = { rrs: [] };

/**
 * The node of a name `[..., service, namespace, "svc"]` below a multicluster `zone`; undefined when
 * it does not exist. `exposed(ns)`: whether the namespace exists locally (it also exists in the zone
 * when it has imports).
 */
export function multiclusterNode(
  mc: Multicluster,
  zone: string,
  labels: readonly string[],
  ttl: number,
  exposed: (ns: string) => boolean,
): McsNode | undefined {
  const n = labels.length;
  const ns = labels[n - 2];
  if (n === 2) return exposed(ns) || mc.hasNamespace(ns) ? EMPTY : undefined;
  if (n > 5) return undefined;
  const imp = mc.import(ns, labels[n - 3]);
  if (imp === undefined) return undefined;
  const base = join(`${imp.name}.${imp.ns}.svc`, zone);
  const groups = imp.headless ? mc.endpoints(imp) : [];
  // A headless import without a ready endpoint does not exist (2.4.1: "the answer should be NXDOMAIN").
  if (imp.headless && groups.length === 0) return undefined;
  if (n === 3) {
    const ips = imp.headless ? groups.flatMap((g) => g.endpoints.map((e) => e.ip)) : imp.ips;
    return { rrs: addresses(base, ips, ttl) };
  }
  const [first, second] = labels;
  const ports = imp.headless ? groups.filter((g) => g.cluster !== "").flatMap((g) => g.ports) : imp.ports;
  if (n === 4) {
    if (first.startsWith("_"))
      return ports.some((p) => p.name !== "" && `_${p.proto}` === first) ? EMPTY : undefined;
    return imp.headless && groups.some((g) => g.cluster === first) ? EMPTY : undefined;
  }
  if (n === 5 && first.startsWith("_") && second.startsWith("_")) {
    return srv(`${first}.${second}.${base}`, base, imp, groups, first.slice(1), second.slice(1), ttl);
  }
  if (n === 5 && imp.headless) {
    const ips: string[] = [];
    for (const g of groups)
      if (g.cluster === second) for (const e of g.endpoints) if (e.name === first) ips.push(e.ip);
    return ips.length > 0 ? { rrs: addresses(`${first}.${second}.${base}`, ips, ttl) } : undefined;
  }
  return undefined;
}

/** SRV records for one named port: a ClusterSetIP import points at its own name, a headless one at
 * each ready endpoint's per-cluster name, with the port its slice lists. */
function srv(
  owner: string,
  base: string,
  imp: ServiceImport,
  groups: readonly ClusterGroup[],
  port: string,
  proto: string,
  ttl: number,
): McsNode | undefined {
  const found: { port: number; target: string; ips: string[] }[] = [];
  if (!imp.headless) {
    for (const p of imp.ports)
      if (p.name === port && p.proto === proto) found.push({ port: p.port, target: base, ips: [...imp.ips] });
  } else {
    for (const g of groups) {
      if (g.cluster === "") continue;
      for (const p of g.ports) {
        if (p.name !== port || p.proto !== proto) continue;
        for (const e of g.endpoints) {
          const target = `${e.name}.${g.cluster}.${base}`;
          const same = found.find((f) => f.port === p.port && f.target === target);
          if (same) same.ips.push(e.ip);
          else found.push({ port: p.port, target, ips: [e.ip] });
        }
      }
    }
  }
  if (found.length === 0) return undefined;
  const weight = Math.max(1, Math.floor(100 / found.length));
  const rrs: RR[] = found.map((f) => ({
    name: owner,
    type: Type.SRV,
    class: Class.IN,
    ttl,
    data: { type: Type.SRV, priority: 0, weight, port: f.port, target: f.target },
  }));
  const additional: RR[] = [];
  const done = new Set<string>();
  for (const f of found) {
    if (done.has(f.target)) continue;
    done.add(f.target);
    additional.push(...addresses(f.target, f.ips, ttl));
  }
  return { rrs, additional };
}

/** A and AAAA records of `name`, one per distinct address. */
function addresses(name: string, ips: readonly string[], ttl: number): RR[] {
  return [...new Set(ips)].map((ip) =>
    ip.includes(":")
      ? { name, type: Type.AAAA, class: Class.IN, ttl, data: { type: Type.AAAA, address: ip } }
      : { name, type: Type.A, class: Class.IN, ttl, data: { type: Type.A, address: ip } },
  );
}
