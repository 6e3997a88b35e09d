// The kubernetes plugin as a source of zone transfers (transfer plugin): a forward zone's records in
// CoreDNS's order and shape (its kubernetes/xfr.go, whose test table xfr.test.ts holds): the NS and
// the name server's addresses, then every service of an exposed namespace sorted by name (then
// namespace): a cluster IP service's addresses, then per port an SRV at its own name and one at
// `_PORT._PROTO` for a named port, all of weight 100; a headless service's endpoints one after
// another, each with the service's address record, its own, and an SRV per named port, weighed over
// its EndpointSlice's endpoints; an ExternalName's CNAME. Pod records (deprecated, spec 2.6),
// dns-version and zonal names are not transferred, as in CoreDNS.
//
// So a secondary holds the zone CoreDNS would send for the same cluster. Its records are records the
// plugin answers (xfr.test.ts checks it), with two differences CoreDNS has too: SRV weights (the
// answers weigh over the whole answer), and the SRV records at a headless service's own name, which
// are answered and not sent. A record that two slices both list goes out once. A multicluster zone
// goes out the same way, its ServiceImports in the place of services, with one more difference:
// CoreDNS names a headless import's endpoints without their cluster, names it does not answer; here
// they are the names the zone answers (HOST.CLUSTER.SVC.NS.svc).
//
// Records are made one service at a time as the transfer writes them: at 100k services the transfer
// holds the sorted list of services and one message, never the zone.

import type { RR } from "../../../dns/message.ts";
import { Class, Type } from "../../../dns/constants.ts";
import { join } from "../../../dns/name.ts";
import type { Transferer } from "../../transfer/transferer.ts";
import type { Records } from "./records.ts";
import type { EndpointGroup, Service, SvcPort } from "../model/slim-types.ts";
import type { StoreView } from "../store/store-view.ts";
import { isReverseZone } from "../names/zones.ts";

export function kubernetesTransferer(store: StoreView, records: Records): Transferer {
  return {
    name: "kubernetes",
    zones: () => records.options.zones.filter((z) => !isReverseZone(z)),
    transfer(zone) {
      if (isReverseZone(zone) || !records.options.zones.includes(zone)) return undefined;
      if (!store.synced) return { unavailable: "the kubernetes store has not synced yet" };
      return { soa: records.soa(zone), records: () => zoneRecords(store, records, zone) };
    },
  };
}

/** The zone's records between its two SOAs, one service (or import) per array. */
export function* zoneRecords(store: StoreView, records: Records, zone: string): Generator<RR[]> {
  const apex = records.answer(zone, zone, Type.NS);
  yield [...apex.answer, ...apex.additional];
  const { ttl, multicluster } = records.options;
  if (multicluster?.serves(zone)) {
    for (const imp of [...multicluster.imports()].sort(byName)) {
      const base = join(`${imp.name}.${imp.ns}.svc`, zone);
      const published = { clusterIPs: imp.ips, ...imp, groups: multicluster.endpoints(imp) };
      const rrs = publishedRecords(published, base, ttl);
      if (rrs.length > 0) yield rrs;
    }
    return;
  }
  for (const svc of [...store.services()].sort(byName)) {
    const rrs = serviceRecords(store, records, svc, zone);
    if (rrs.length > 0) yield rrs;
  }
}

/** The records of one service in `zone` as a transfer sends them: none for one it leaves out. */
export function serviceRecords(store: StoreView, records: Records, svc: Service, zone: string): RR[] {
  if (!store.namespaceExposed(svc.ns)) return [];
  const { ttl } = records.options;
  const base = join(`${svc.name}.${svc.ns}.svc`, zone);
  if (svc.externalName !== undefined) {
    const data = { type: Type.CNAME, target: svc.externalName } as const;
    return [{ name: base, type: Type.CNAME, class: Class.IN, ttl, data }];
  }
  const groups = store.endpoints(svc);
  // Names that answer NXDOMAIN: with `ignore empty_service` a service without ready endpoints.
  if (groups.length === 0 && (store.names.options.ignoreEmptyService ?? false)) return [];
  return publishedRecords({ ...svc, groups }, base, ttl);
}

/** Sorted by name, then namespace, as CoreDNS sorts (by name). */
function byName(a: { name: string; ns: string }, b: { name: string; ns: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0;
}

/** What a service or an import publishes, as a transfer reads it: its cluster (or clusterset) IPs
 * and ports, or, headless, its ready endpoints in groups. An imported group's endpoints are named
 * below their cluster's label, and have no names when it has none. */
interface Published {
  readonly headless: boolean;
  readonly clusterIPs: readonly string[];
  readonly ports: readonly SvcPort[];
  readonly groups: readonly (EndpointGroup & { readonly cluster?: string })[];
}

/** The records of a service or an import, as CoreDNS's transfer makes them. */
function publishedRecords(p: Published, base: string, ttl: number): RR[] {
  const rr = (name: string, data: RR["data"]): RR => ({ name, type: data.type, class: Class.IN, ttl, data });
  const srv = (owner: string, weight: number, port: number, target: string) =>
    rr(owner, { type: Type.SRV, priority: 0, weight, port, target });
  const out: RR[] = [];
  // A record goes out once (an SRV record once per owner, port and target), as an answer holds it.
  const seen = new Set<string>();
  const once = (key: string) => !seen.has(key) && seen.add(key) !== undefined;
  if (!p.headless) {
    if (p.clusterIPs.length === 0) return out;
    for (const ip of p.clusterIPs) if (once(ip)) out.push(rr(base, address(ip)));
    for (const port of p.ports) {
      // Every port at the service's own name (CoreDNS's peer-finder records), the named ones at their
      // own names too.
      if (once(`${base} ${port.port}`)) out.push(srv(base, 100, port.port, base));
      const owner = `_${port.name}._${port.proto}.${base}`;
      if (port.name !== "" && once(`${owner} ${port.port}`)) out.push(srv(owner, 100, port.port, base));
    }
    return out;
  }
  for (const g of p.groups) {
    const weight = Math.max(1, Math.floor(100 / g.endpoints.length));
    const label = (name: string) =>
      g.cluster === undefined ? name : g.cluster === "" ? undefined : `${name}.${g.cluster}`;
    for (const { ip, name } of g.endpoints) {
      if (once(ip)) out.push(rr(base, address(ip)));
      const own = label(name);
      if (own === undefined) continue;
      const host = `${own}.${base}`;
      if (once(`${own} ${ip}`)) out.push(rr(host, address(ip)));
      for (const port of g.ports) {
        const owner = `_${port.name}._${port.proto}.${base}`;
        if (port.name !== "" && once(`${owner} ${port.port} ${own}`))
          out.push(srv(owner, weight, port.port, host));
      }
    }
  }
  return out;
}

function address(ip: string): RR["data"] {
  return ip.includes(":") ? { type: Type.AAAA, address: ip } : { type: Type.A, address: ip };
}
