// The kubernetes plugin as a source of zone transfers (transfer plugin): a forward zone's records in
// CoreDNS's order and shape (its kubernetes/xfr.go): the NS and the name server's addresses, then
// every service of an exposed namespace sorted by name (then namespace): a cluster IP service's
// addresses and an SRV per named port; a headless service's endpoints one after another, each with
// the service's address record, its own, and an SRV per named port; an ExternalName's CNAME. Pod
// records (deprecated, spec 2.6) and dns-version are not transferred, as in CoreDNS.
//
// The records are exactly those the plugin answers queries with (records.ts; xfr.test.ts checks the
// two against each other), so a secondary serves what clusterdns does. Where CoreDNS's transfer and
// its answers differ, the answers win: SRV weights are those of the SRV answer for the name (CoreDNS
// weighs a transfer's SRVs per EndpointSlice), the SRV records at a service's own name are sent (a
// CoreDNS answer has them, its transfer not), and a record two slices both list is sent once.
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
    // SRV records at the service's own name (CoreDNS's "peer-finder" records), wherever the answers
    // hold them, and every SRV's weight: taken from the answers, so the two cannot drift apart.
    const srvAnswer = (owner: string) =>
      records.answer(zone, owner, Type.SRV).answer.filter((rr) => rr.type === Type.SRV);
    const rrs = serviceRecords(svc, base, store.endpoints(svc), ttl, ignoreEmptyService, srvAnswer);
    if (rrs.length > 0) yield rrs;
  }
}

/** One service's records, as records.ts answers them. */
function serviceRecords(
  svc: Service,
  base: string,
  groups: readonly EndpointGroup[],
  ttl: number,
  ignoreEmptyService: boolean,
  srvAnswer: (owner: string) => RR[],
): RR[] {
  const rr = (name: string, data: RR["data"]): RR => ({ name, type: data.type, class: Class.IN, ttl, data });
  if (svc.externalName !== undefined) return [rr(base, { type: Type.CNAME, target: svc.externalName })];
  // Names that answer NXDOMAIN: a headless service without ready endpoints, and with
  // `ignore empty_service` any service without them.
  if (groups.length === 0 && (svc.headless || ignoreEmptyService)) return [];
  const out: RR[] = [];
  // A record two slices both list goes out once, as an answer holds it once.
  const seen = new Set<string>();
  const once = (key: string) => {
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  // The weight the SRV answer of `owner` gives the record for this port and target.
  const weights = new Map<string, Map<string, number>>();
  const weightOf = (owner: string, port: number, target: string) => {
    let w = weights.get(owner);
    if (w === undefined) {
      w = new Map();
      for (const a of srvAnswer(owner)) {
        const d = a.data;
        if ("weight" in d) w.set(`${d.port} ${d.target}`, d.weight);
      }
      weights.set(owner, w);
    }
    return w.get(`${port} ${target}`) ?? 0;
  };
  if (!svc.headless) {
    for (const ip of svc.clusterIPs) if (once(ip)) out.push(rr(base, address(ip)));
    out.push(...srvAnswer(base));
    for (const p of svc.ports.filter((q) => q.name !== "")) {
      const owner = `_${p.name}._${p.proto}.${base}`;
      const data = {
        type: Type.SRV,
        priority: 0,
        weight: weightOf(owner, p.port, base),
        port: p.port,
        target: base,
      } as const;
      out.push(rr(owner, data));
    }
    return out;
  }
  for (const g of groups) {
    for (const e of g.endpoints) {
      const { ip, name } = e;
      const host = `${name}.${base}`;
      if (once(ip)) out.push(rr(base, address(ip)));
      if (once(`${name} ${ip}`)) out.push(rr(host, address(ip)));
      for (const p of g.ports) {
        if (p.name === "") continue;
        const owner = `_${p.name}._${p.proto}.${base}`;
        if (!once(`${owner} ${p.port} ${name}`)) continue;
        const w = weightOf(owner, p.port, host);
        out.push(rr(owner, { type: Type.SRV, priority: 0, weight: w, port: p.port, target: host }));
      }
    }
  }
  out.push(...srvAnswer(base));
  return out;
}

function address(ip: string): RR["data"] {
  return ip.includes(":") ? { type: Type.AAAA, address: ip } : { type: Type.A, address: ip };
}
