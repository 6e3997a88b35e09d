// The names below a ServiceImport in a multicluster zone (clusterset.local), written once as a name
// tree (name-tree.ts), as the Kubernetes DNS-Based Multicluster Service Discovery specification
// (KEP-1645's specification.md, schema 1.0.0) has them, with CoreDNS's SRV records at the import's own
// name:
//   SVC.NS.svc                 A/AAAA: a ClusterSetIP import's spec.ips (2.3.1); a headless import's
//                              ready endpoints in every cluster (2.4.1). SRV for every port, as CoreDNS
//                              answers a service's own name
//   _PROTO.SVC.NS.svc          nothing, when a named port uses PROTO
//   _PORT._PROTO.SVC.NS.svc    SRV per named port: to the import's name (2.3.2); to each ready
//                              endpoint's per-cluster name (2.4.2)
//   CLUSTER.SVC.NS.svc         nothing, above a headless import's endpoint names (2.4.4)
//   HOST.CLUSTER.SVC.NS.svc    A/AAAA: a headless import's endpoint in one cluster (2.4.1)
// A headless import without a ready endpoint has no names (2.4.1: NXDOMAIN). The answers/records.ts of the
// multicluster zones is answers/multicluster-records.ts; Multicluster lists the names for the answer cache.

import type { ClusterGroup, ServiceImport, SvcPort } from "../model/slim-types.ts";
import { EMPTY, NameTree, addTo, one, type Holding, type Shape, type SrvHolding } from "./name-tree.ts";

/** An import with its ready endpoints; `withSrv`: SRV records are wanted at its own name. */
export interface ImportSubject {
  readonly imp: ServiceImport;
  readonly groups: readonly ClusterGroup[];
  readonly withSrv: boolean;
}

type ShapeName = "import" | "proto" | "port" | "cluster" | "endpoint";

const SHAPES: readonly Shape<ImportSubject, ShapeName>[] = [
  {
    name: "import",
    is: (below) => below.length === 0,
    each(s) {
      const addresses = s.imp.headless ? s.groups.flatMap((g) => g.endpoints.map((e) => e.ip)) : s.imp.ips;
      return one("", s.withSrv ? { addresses, srv: srvOf(s, () => true) } : { addresses });
    },
  },
  {
    name: "proto",
    is: (below) => below.length === 1 && below[0].startsWith("_"),
    each(s) {
      return new Map(namedPorts(s).map((p) => [`_${p.proto}`, EMPTY]));
    },
  },
  {
    // As CoreDNS reads two labels: a port and a protocol when either starts with "_".
    name: "port",
    is: (below) => below.length === 2 && (below[0].startsWith("_") || below[1].startsWith("_")),
    each(s, only) {
      const out = new Map<string, Holding>();
      for (const p of namedPorts(s)) {
        const key = `_${p.name}._${p.proto}`;
        if (out.has(key) || (only !== undefined && key !== only.join("."))) continue;
        out.set(key, { srv: srvOf(s, (q) => q.name === p.name && q.proto === p.proto) });
      }
      return out;
    },
  },
  {
    name: "cluster",
    is: (below) => below.length === 1,
    each(s) {
      return new Map(clustered(s).map((g) => [g.cluster, EMPTY]));
    },
  },
  {
    name: "endpoint",
    is: (below) => below.length === 2,
    each(s, only) {
      const byName = new Map<string, string[]>();
      for (const g of clustered(s)) {
        if (only !== undefined && g.cluster !== only[1]) continue;
        for (const e of g.endpoints)
          if (only === undefined || e.name === only[0]) addTo(byName, `${e.name}.${g.cluster}`, e.ip);
      }
      return new Map([...byName].map(([name, addresses]) => [name, { addresses }]));
    },
  },
];

/** The names below imports. */
export const importNames = new NameTree<ImportSubject, ShapeName>(
  SHAPES,
  (s) => !s.imp.headless || s.groups.length > 0,
);

/** A headless import's groups of a cluster that has a name (a label): only those have names. */
function clustered(s: ImportSubject): readonly ClusterGroup[] {
  return s.imp.headless ? s.groups.filter((g) => g.cluster !== "") : [];
}

/** The named ports SRV records exist for: the import's own for a ClusterSetIP import, those of its
 * named clusters' slices for a headless one. */
function namedPorts(s: ImportSubject): SvcPort[] {
  const ports = s.imp.headless ? clustered(s).flatMap((g) => g.ports) : s.imp.ports;
  return ports.filter((p) => p.name !== "");
}

/** The SRV records of the ports `matches` accepts, one per address behind each: a ClusterSetIP
 * import points at its own name, a headless one at each endpoint's per-cluster name. */
function srvOf(s: ImportSubject, matches: (p: SvcPort) => boolean): SrvHolding[] {
  const out: SrvHolding[] = [];
  if (!s.imp.headless) {
    for (const p of s.imp.ports) if (matches(p)) for (const ip of s.imp.ips) out.push({ port: p.port, ip });
    return out;
  }
  for (const g of clustered(s))
    for (const p of g.ports)
      if (matches(p))
        for (const e of g.endpoints) out.push({ port: p.port, host: `${e.name}.${g.cluster}`, ip: e.ip });
  return out;
}
