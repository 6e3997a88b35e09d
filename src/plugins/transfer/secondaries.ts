// Who may transfer a zone: the `to` lines of a transfer stanza. An entry is `*` (anyone), an address,
// an address with a port (CoreDNS's form), or a CIDR prefix (as the kubernetes plugin's old `transfer
// to` took them). Each address, with or without a port (53 when none), is also where NOTIFY goes when
// the zone changes (RFC 1996), as CoreDNS sends it; `*` and prefixes name no one to notify. A `to`
// line's key (`key NAME`, one of the block's tsig secrets) signs the NOTIFYs to its addresses.

import { BlockList, isIP } from "node:net";
import type { Signer } from "../../client/tsig-signer.ts";

/** One secondary that is sent NOTIFY. */
export interface NotifyTarget {
  readonly host: string;
  readonly port: number;
  /** Signs each NOTIFY to it and checks the answer (TSIG); unsigned when undefined. */
  readonly signer?: () => Signer;
  /** The key's name, for logs. */
  readonly key?: string;
}

/** The TSIG key a `to` line gives its addresses' NOTIFYs. */
export interface NotifyKey {
  readonly name: string;
  readonly signer: () => Signer;
}

/** RFC 1996 sends NOTIFY to the secondary's DNS port unless told otherwise. */
const NOTIFY_PORT = 53;

export class Secondaries {
  #anyone = false;
  readonly #list = new BlockList();
  readonly #notify: NotifyTarget[] = [];

  /** The addresses (and ports) named one by one: where NOTIFY goes. */
  get notifyTargets(): readonly NotifyTarget[] {
    return this.#notify;
  }

  /** Adds one `to` argument; returns an error message for one that is none of the forms above, or an
   * address already named with another key. */
  add(entry: string, key?: NotifyKey): string | undefined {
    if (entry === "*") {
      this.#anyone = true;
      return undefined;
    }
    const slash = entry.indexOf("/");
    if (slash >= 0) {
      const base = entry.slice(0, slash);
      const bits = entry.slice(slash + 1);
      const family = isIP(base);
      const max = family === 6 ? 128 : 32;
      if (family === 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > max) {
        return `'${entry}' is not a CIDR prefix`;
      }
      this.#list.addSubnet(base, Number(bits), family === 6 ? "ipv6" : "ipv4");
      return undefined;
    }
    const target = hostOf(entry);
    if (target === undefined) return `'${entry}' is not an address, address:port, CIDR prefix or *`;
    this.#list.addAddress(target.host, isIP(target.host) === 6 ? "ipv6" : "ipv4");
    const named = this.#notify.find((t) => t.host === target.host && t.port === target.port);
    if (named === undefined) this.#notify.push({ ...target, signer: key?.signer, key: key?.name });
    else if (named.key !== key?.name) return `'${entry}' is named before with another key`;
    return undefined;
  }

  /** True when a client at `address` (as the socket reports it) may transfer. */
  allows(address: string): boolean {
    if (this.#anyone) return true;
    // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d.
    const ip = address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(ip);
    return family !== 0 && this.#list.check(ip, family === 6 ? "ipv6" : "ipv4");
  }
}

/** The address and port of `a.b.c.d`, `a.b.c.d:port`, `v6` or `[v6]:port`; undefined for anything
 * else. */
function hostOf(entry: string): NotifyTarget | undefined {
  if (isIP(entry) !== 0) return { host: entry, port: NOTIFY_PORT };
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry) ?? /^([^:]+):(\d{1,5})$/.exec(entry);
  const port = Number(m?.[2]);
  if (m === null || port < 1 || port > 65535) return undefined;
  return isIP(m[1]) !== 0 ? { host: m[1], port } : undefined;
}
