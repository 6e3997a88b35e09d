// The record sets the kubernetes plugin and k8s_external build alike: address records for a name, and
// SRV records with their targets' addresses, weighted as CoreDNS weights them; and the records of what
// a name of a name tree holds.

import type { RR } from "../../../dns/message.ts";
import { Class, Type } from "../../../dns/constants.ts";
import type { Holding } from "../names/name-tree.ts";

/** A and AAAA records of `name`, one per distinct address. */
export function addressRecords(name: string, ips: readonly string[], ttl: number): RR[] {
  const out: RR[] = [];
  const seen = new Set<string>();
  for (const ip of ips) {
    if (seen.has(ip)) continue;
    seen.add(ip);
    const v6 = ip.includes(":");
    out.push({
      name,
      type: v6 ? Type.AAAA : Type.A,
      class: Class.IN,
      ttl,
      data: v6 ? { type: Type.AAAA, address: ip } : { type: Type.A, address: ip },
    });
  }
  return out;
}

/** One (target, port) a service offers through one address; `ip` is undefined for a target that is a
 * name of its own (a load balancer's hostname), which gets no address record. */
export interface SrvEntry {
  readonly port: number;
  readonly target: string;
  readonly ip?: string;
}

/** SRV records for `entries`, after CoreDNS (plugin/backend_lookup.go): every entry counts for the
 * weight, floor(100 / entries) and at least 1, before duplicates go; then one record per target and
 * port, and one address record per target and address for the additional section. */
export function srvSet(
  owner: string,
  entries: readonly SrvEntry[],
  ttl: number,
): { rrs: RR[]; additional: RR[] } {
  const weight = Math.max(1, Math.floor(100 / entries.length));
  const rrs: RR[] = [];
  const additional: RR[] = [];
  const records = new Set<string>();
  const addresses = new Set<string>();
  for (const e of entries) {
    const srv = `${e.target} ${e.port}`;
    if (!records.has(srv)) {
      records.add(srv);
      rrs.push({
        name: owner,
        type: Type.SRV,
        class: Class.IN,
        ttl,
        data: { type: Type.SRV, priority: 0, weight, port: e.port, target: e.target },
      });
    }
    const address = `${e.target} ${e.ip}`;
    if (e.ip !== undefined && !addresses.has(address)) {
      addresses.add(address);
      additional.push(...addressRecords(e.target, [e.ip], ttl));
    }
  }
  return { rrs, additional };
}

/** The records of a name that holds `h`: its addresses, CNAME and SRV records (with their targets'
 * addresses for the additional section). `target` names an SRV target from its labels above the
 * object's own name (none for the object itself). */
export function holdingRecords(
  owner: string,
  h: Holding,
  target: (host: string | undefined) => string,
  ttl: number,
): { rrs: RR[]; additional?: RR[] } {
  const rrs = h.addresses === undefined ? [] : addressRecords(owner, h.addresses, ttl);
  if (h.cname !== undefined) {
    rrs.push({
      name: owner,
      type: Type.CNAME,
      class: Class.IN,
      ttl,
      data: { type: Type.CNAME, target: h.cname },
    });
  }
  if (h.srv === undefined || h.srv.length === 0) return { rrs };
  const srv = srvSet(
    owner,
    h.srv.map((e) => ({ port: e.port, target: target(e.host), ip: e.ip })),
    ttl,
  );
  return { rrs: [...rrs, ...srv.rrs], additional: srv.additional };
}
