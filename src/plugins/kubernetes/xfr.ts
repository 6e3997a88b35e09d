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
// are answered and not sent. A record that two slices both list goes out once.
//
// Records are made one service at a time as the transfer writes them: at 100k services the transfer
// holds the sorted list of services and one message, never the zone.

import type { RR } from "../../dns/message.ts";
import { Class, Type } from "../../dns/constants.ts";
import { join } from "../../dns/name.ts";
import type { Transferer } from "../transfer/transferer.ts";
import type { Records } from "./records.ts";
import type { EndpointGroup, Service } from "./slim-types.ts";
import type { Store } from "./store.ts";
import { isReverseZone } from "./store.ts";

export function kubernetesTransferer(store: Store, records: Records): Transferer {
  return {
    name: "kubernetes",
    transfer(zone) {
      const { zones, multicluster } = records.options;
      // Multicluster zones (ServiceImports) are not transferred: NOTAUTH.
      if (isReverseZone(zone) || !zones.includes(zone) || multicluster?.serves(zone)) return undefined;
      if (!store.synced) return { unavailable: "the kubernetes store has not synced yet" };
      return { soa: records.soa(zone), records: () => zoneRecords(store, records, zone) };
    },
  };
}

/** The zone's records between its two SOAs, one service per array. */
export function* zoneRecords(store: Store, records: Records, zone: string): Generator<RR[]> {
  const apex = records.answer(zone, zone, Type.NS);
  yield [...apex.answer, ...apex.additional];
  const services = [...store.services()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0,
  );
  const { ttl } = records.options;
  const { ignoreEmptyService = false } = store.names.options;
  for (const svc of services) {
    if (!store.namespaceExposed(svc.ns)) continue;
    const base = join(`${svc.name}.${svc.ns}.svc`, zone);
    const rrs = serviceRecords(svc, base, store.endpoints(svc), ttl, ignoreEmptyService);
    if (rrs.length > 0) yield rrs;
  }
}

/** One service's records, as CoreDNS's transfer makes them. */
function serviceRecords(
  svc: Service,
  base: string,
  groups: readonly EndpointGroup[],
  ttl: number,
  ignoreEmptyService: boolean,
): RR[] {
  const rr = (name: string, data: RR["data"]): RR => ({ name, type: data.type, class: Class.IN, ttl, data });
  const srv = (owner: string, weight: number, port: number, target: string) =>
    rr(owner, { type: Type.SRV, priority: 0, weight, port, target });
  if (svc.externalName !== undefined) return [rr(base, { type: Type.CNAME, target: svc.externalName })];
  // Names that answer NXDOMAIN: a headless service without ready endpoints, and with
  // `ignore empty_service` any service without them.
  if (groups.length === 0 && (svc.headless || ignoreEmptyService)) return [];
  const out: RR[] = [];
  // A record goes out once (an SRV record once per owner, port and target), as an answer holds it.
  const seen = new Set<string>();
  const once = (key: string) => !seen.has(key) && seen.add(key) !== undefined;
  if (!svc.headless) {
    for (const ip of svc.clusterIPs) if (once(ip)) out.push(rr(base, address(ip)));
    for (const p of svc.ports) {
      // Every port at the service's own name (CoreDNS's peer-finder records), the named ones at their
      // own names too.
      if (once(`${base} ${p.port}`)) out.push(srv(base, 100, p.port, base));
      const owner = `_${p.name}._${p.proto}.${base}`;
      if (p.name !== "" && once(`${owner} ${p.port}`)) out.push(srv(owner, 100, p.port, base));
    }
    return out;
  }
  for (const g of groups) {
    const weight = Math.max(1, Math.floor(100 / g.endpoints.length));
    for (const { ip, name } of g.endpoints) {
      const host = `${name}.${base}`;
      if (once(ip)) out.push(rr(base, address(ip)));
      if (once(`${name} ${ip}`)) out.push(rr(host, address(ip)));
      for (const p of g.ports) {
        const owner = `_${p.name}._${p.proto}.${base}`;
        if (p.name !== "" && once(`${owner} ${p.port} ${name}`)) out.push(srv(owner, weight, p.port, host));
      }
    }
  }
  return out;
}

function address(ip: string): RR["data"] {
  return ip.includes(":") ? { type: Type.AAAA, address: ip } : { type: Type.A, address: ip };
}
