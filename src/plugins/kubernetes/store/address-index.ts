// The store's indexes by address: which services publish an address (the kubernetes plugin's PTR
// records), which publish it as an external address (k8s_external's), and the partial reverse names
// above published addresses, which exist as empty non-terminals. Kept in step with each service's
// footprint before and after a change, which also says which reverse names the change touched.

import { parent, reverseName } from "../../../dns/name.ts";
import type { Footprint } from "./footprint.ts";
import type { Tables } from "../../../offheap/table.ts";
import { OneOrMany } from "./one-or-many.ts";
import { CountedKeys } from "./counted-keys.ts";
import { storeTable } from "./tables.ts";

/** Its indexes are tables (./tables.ts) keyed by the address's canonical text. */
export class AddressIndex {
  /** Published address -> the keys of the services publishing it. The PTR targets are worked out
   * when asked (PTR queries are rare; one stored entry per endpoint is not). */
  readonly #byIP: OneOrMany;
  /** External address -> the keys of the services publishing it. */
  readonly #byExternal: OneOrMany;
  /** Partial reverse names above published addresses ("10.in-addr.arpa."), counted. */
  readonly #reverseParents: CountedKeys;

  constructor(tables: Tables) {
    this.#byIP = new OneOrMany(storeTable(tables, "addresses.byIP"));
    this.#byExternal = new OneOrMany(storeTable(tables, "addresses.byExternal"));
    this.#reverseParents = new CountedKeys(storeTable(tables, "addresses.reverseParents"));
  }

  /** Published addresses. */
  get size(): number {
    return this.#byIP.size;
  }

  /** Keys of the services that publish `ip` (as a cluster IP or an endpoint). */
  services(ip: string): readonly string[] {
    return this.#byIP.get(ip);
  }

  /** Keys of the services that publish `ip` as an external address. */
  externalServices(ip: string): readonly string[] {
    return this.#byExternal.get(ip);
  }

  /** True when a published address lies below this partial reverse name ("244.10.in-addr.arpa."). */
  reverseParentExists(name: string): boolean {
    return this.#reverseParents.has(name);
  }

  /** Moves the service `key` from what it published (`before`) to what it publishes (`after`), and
   * adds to `changed` the reverse names whose answers that changed. When the footprints are of a part
   * of the service (one EndpointSlice), `kept` says which addresses the rest still publishes: those
   * stay indexed. */
  update(
    key: string,
    before: Footprint,
    after: Footprint,
    changed: string[],
    kept?: (ip: string) => boolean,
  ): void {
    for (const [ip, targets] of before.ips) {
      const now = after.ips.get(ip);
      if (now === undefined && !kept?.(ip)) this.#unindex(ip, key, changed);
      if (now === undefined || !sameList(now, targets)) changed.push(reverseName(ip)!);
    }
    // An address published before is indexed under `key` already: looking it up again read the
    // shared table (and decoded its entry) for every address of the slice on every event.
    for (const ip of after.ips.keys()) {
      if (before.ips.has(ip)) continue;
      changed.push(reverseName(ip)!);
      this.#index(ip, key, changed);
    }
    for (const ip of before.external) {
      if (after.external.includes(ip)) continue;
      this.#byExternal.delete(ip, key);
      changed.push(reverseName(ip)!);
    }
    for (const ip of after.external) {
      if (before.external.includes(ip)) continue;
      this.#byExternal.add(ip, key);
      changed.push(reverseName(ip)!);
    }
  }

  /** Indexes what the service `key` publishes, for an index built in one pass (the first sync), which
   * reports no names. */
  add(key: string, fp: Footprint): void {
    for (const ip of fp.ips.keys()) this.#index(ip, key, undefined);
    for (const ip of fp.external) this.#byExternal.add(ip, key);
  }

  /** A rough estimate of the heap it takes. */
  bytes(): number {
    let b = this.#byIP.bytes() + this.#byExternal.bytes();
    for (const k of this.#reverseParents.keys()) b += 40 + k.length;
    return b;
  }

  #index(ip: string, key: string, changed: string[] | undefined): void {
    if (!this.#byIP.add(ip, key)) return;
    for (const p of reverseParents(ip)) if (this.#reverseParents.add(p, 1)) changed?.push(p);
  }

  #unindex(ip: string, key: string, changed: string[]): void {
    if (!this.#byIP.delete(ip, key)) return;
    for (const p of reverseParents(ip)) if (this.#reverseParents.add(p, -1)) changed.push(p);
  }
}

/** The partial reverse names strictly between an address's reverse name and in-addr.arpa./ip6.arpa. */
function reverseParents(ip: string): string[] {
  // An indexed IPv4 address is canonical (normalIP): its parents without parsing it again. (An IPv6
  // text may hold dots too, "::ffff:1.2.3.4": it takes the general path.)
  const v4 = ip.includes(":") ? [] : ip.split(".");
  if (v4.length === 4) {
    const [a, b, c] = v4;
    return [`${c}.${b}.${a}.in-addr.arpa.`, `${b}.${a}.in-addr.arpa.`, `${a}.in-addr.arpa.`];
  }
  const out: string[] = [];
  const top = ip.includes(":") ? "ip6.arpa." : "in-addr.arpa.";
  for (let n = parent(reverseName(ip)!); n !== top; n = parent(n)) out.push(n);
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
