// Reads the services of a name from etcd as CoreDNS's etcd plugin does: the key's subtree (or, when
// it holds nothing, the key itself), wildcard labels matched per segment,
// TTLs from the record and its lease, SkyDNS groups applied.

import type { EtcdClient, KeyValue } from "./client.ts";
import type { Service } from "./service.ts";
import { grouped, keyOf, matchesWildcard, parseService } from "./service.ts";
import { Type } from "../../dns/constants.ts";

/** The name has no key in etcd: NXDOMAIN (or fallthrough). */
export class NameNotFound extends Error {
  readonly code = "ETCD_NOT_FOUND";
}

const DEFAULT_PRIORITY = 10;
const DEFAULT_TTL = 300;

export interface RecordsOptions {
  client: EtcdClient;
  /** The path under which the records live, without slashes around it ("skydns"). */
  prefix: string;
  /** Bounds on a lease's remaining time as a TTL, seconds. */
  minLeaseTtl: number;
  maxLeaseTtl: number;
}

export class Records {
  readonly #o: RecordsOptions;

  constructor(o: RecordsOptions) {
    this.#o = o;
  }

  /** The services of `name` that can answer `qtype`. `exact`: the key itself only (CNAME, PTR);
   * otherwise its subtree. Throws NameNotFound when etcd holds no key for it. */
  async services(name: string, exact: boolean, qtype: number, deadline = Infinity): Promise<Service[]> {
    const { key, star } = keyOf(name, this.#o.prefix, true);
    const kvs = await this.#get(key, !exact, deadline);
    const nameKey = keyOf(name, this.#o.prefix).key;
    const out: Service[] = [];
    for (const kv of kvs) {
      if (star && !matchesWildcard(kv.key, nameKey)) continue;
      const s = parseService(kv.key, kv.value);
      s.ttl = await this.#ttl(kv, s.ttl, deadline);
      if (s.priority === 0) s.priority = DEFAULT_PRIORITY;
      if (s.host !== "" || (qtype === Type.TXT && s.text !== "")) out.push(s);
    }
    return grouped(out);
  }

  async #get(key: string, subtree: boolean, deadline: number): Promise<KeyValue[]> {
    const c = this.#o.client;
    if (subtree) {
      const below = await c.range(key.endsWith("/") ? key : `${key}/`, true, deadline);
      if (below.length > 0) return below;
    }
    // An empty subtree: the key itself (a leaf). CoreDNS's README says /x then finds /x1 too, its code
    // reads the one key; we do what the code does.
    const kvs = await c.range(key.endsWith("/") && key.length > 1 ? key.slice(0, -1) : key, false, deadline);
    if (kvs.length === 0) throw new NameNotFound(key);
    return kvs;
  }

  /** The record's TTL, lowered to its lease's time left (bounded) when it has a lease. */
  async #ttl(kv: KeyValue, own: number, deadline: number): Promise<number> {
    let lease = 0;
    if (kv.lease !== "0") {
      const left = await this.#o.client.leaseTtl(kv.lease, deadline);
      if (left > 0) lease = Math.min(Math.max(left, this.#o.minLeaseTtl), this.#o.maxLeaseTtl);
    }
    if (lease === 0) return own === 0 ? DEFAULT_TTL : own;
    return own === 0 ? lease : Math.min(own, lease);
  }
}
