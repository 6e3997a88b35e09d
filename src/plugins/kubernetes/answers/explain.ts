// `explain`: which Kubernetes objects a cluster name's answer came from, or why there is none. A query
// that carries the EDNS option EXPLAIN_OPTION gets these lines as TXT records in its additional
// section (`dig +ednsopt=65430 NAME`, or `clusterdns resolve`). Off the query path: it re-reads the
// store for the one name asked, in words, and the reply is never cached.

import type { RR } from "../../../dns/message.ts";
import { Class, Type } from "../../../dns/constants.ts";
import { labelsBelow } from "../../../dns/name.ts";
import type { RecordsOptions } from "./records.ts";
import { podAddress } from "./records.ts";
import type { StoreView } from "../store/store-view.ts";
import type { Service } from "../model/slim-types.ts";

/** Lines saying what produced the answer to `qname` in `zone` (a forward zone of the stanza). */
export function explain(store: StoreView, o: RecordsOptions, zone: string, qname: string): string[] {
  if (qname === zone) return [`the zone apex: SOA and NS of ${zone}`];
  if (o.multicluster?.serves(zone)) return [`a multicluster zone: its names come from ServiceImports`];
  const labels = labelsBelow(qname, zone);
  const n = labels.length;
  const top = labels[n - 1];
  if (n === 1) {
    if (top === "dns-version") return ["the schema version of the Kubernetes DNS specification"];
    if (top === "svc" || top === "pod") return [`'${top}.${zone}' exists as a parent of cluster names`];
  }
  if (top === "pod") return explainPod(store, o, labels);
  if (top !== "svc")
    return [`no cluster name has this form: the label before the zone is '${top}', not svc or pod`];
  const ns = labels[n - 2];
  if (!store.namespaceExposed(ns)) return [`namespace '${ns}' does not exist (or its labels do not match)`];
  if (n === 2) return [`namespace '${ns}' exists: its names are below it`];
  const svc = store.service(ns, labels[n - 3]);
  if (!svc) return [`no Service '${labels[n - 3]}' in namespace '${ns}'`];
  const lines = [describeService(svc)];
  const below = labels.slice(0, n - 3);
  switch (store.names.shapeOf(below)) {
    case undefined:
      if (below.at(-1) === "_zone" && !store.names.options.zonal)
        return [...lines, "zonal names are off: the kubernetes block has no 'zonal'"];
      return [...lines, `no name below a service has this form`];
    case "service":
      return [...lines, ...explainEndpoints(store, svc, undefined)];
    case "zonal": {
      const zone = below.slice(0, -2).join(".");
      const fallback = below.at(-2) === "prefer" ? ", or every endpoint when none is there" : "";
      if (!svc.headless) return [...lines, "zonal names are a headless service's only"];
      return [
        ...lines,
        `a zonal name: the endpoints in zone '${zone}'${fallback}`,
        ...explainEndpoints(store, svc, undefined, zone),
      ];
    }
    case "zonal-parent":
      return [...lines, `a parent of the zonal names of a headless service`];
    case "proto":
    case "port":
      return [...lines, `SRV port names from the Service's named ports and the endpoints' ports`];
    case "endpoint":
      return [...lines, ...explainEndpoints(store, svc, below[0])];
  }
}

function describeService(svc: Service): string {
  const what =
    svc.externalName !== undefined
      ? `ExternalName ${svc.externalName}`
      : svc.headless
        ? "headless"
        : `${svc.type} ${svc.clusterIPs.join(" ")}`;
  return `Service ${svc.ns}/${svc.name}: ${what}`;
}

/** The endpoints behind a service (or one endpoint name, or those of one zone), each with the object
 * it is listed in. */
function explainEndpoints(store: StoreView, svc: Service, name: string | undefined, zone?: string): string[] {
  if (svc.externalName !== undefined) return [];
  if (!svc.headless && name === undefined && zone === undefined) return [];
  const lines: string[] = [];
  for (const { object, group } of store.endpointSources(svc)) {
    for (const e of group.endpoints) {
      if ((name !== undefined && e.name !== name) || (zone !== undefined && e.zone !== zone)) continue;
      const state = [
        e.ready ? "ready" : svc.publishNotReadyAddresses ? "not ready, published" : "not ready, left out",
      ];
      if (e.zone !== undefined) state.push(`zone ${e.zone}`);
      if (e.forZones !== undefined) state.push(`hints for ${e.forZones.join(" ")}`);
      lines.push(`${object}: ${e.ip} as '${e.name}' (${state.join(", ")})`);
    }
  }
  if (lines.length === 0) {
    lines.push(
      zone !== undefined
        ? `no endpoint in zone '${zone}'`
        : name === undefined
          ? "no endpoint in any EndpointSlice or Endpoints"
          : `no endpoint named '${name}'`,
    );
  }
  return lines;
}

function explainPod(store: StoreView, o: RecordsOptions, labels: string[]): string[] {
  if (o.pods === "disabled") return ["pod names are off (pods disabled)"];
  const ns = labels[labels.length - 2];
  if (labels.length !== 3) return [`a pod name is ADDRESS.NAMESPACE.pod`];
  if (o.pods === "insecure") return [`pods insecure: the address the name spells, not checked against pods`];
  const ip = podAddress(labels[0]);
  if (ip === undefined) return [`'${labels[0]}' spells no address`];
  const here = store.podsByIP(ip).filter((p) => p.ns === ns);
  return here.length > 0
    ? here.map((p) => `Pod ${p.ns}/${p.name} has this address (pods verified)`)
    : [`pods verified: no pod in namespace '${ns}' has address ${labels[0]}`];
}

/** The lines as TXT records owned by the asked name (TTL 0: they describe this moment). */
export function explainRecords(qname: string, lines: readonly string[]): RR[] {
  return lines.map((line) => ({
    name: qname,
    type: Type.TXT,
    class: Class.IN,
    ttl: 0,
    data: { type: Type.TXT, strings: [`clusterdns: ${line}`.slice(0, 255)] },
  }));
}
