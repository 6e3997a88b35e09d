// Sets of IP networks (CIDR prefixes and single addresses), for the plugins that decide by address:
// acl by the client's, loadbalance's `prefer` by the answer's. Node's BlockList does the matching;
// one list per family, because BlockList also matches IPv4 addresses against IPv6 prefixes through
// their mapped form (::/0 would hold every IPv4 client), which a CIDR written as IPv6 does not mean.

import { BlockList, isIP } from "node:net";

export class NetSet {
  readonly #v4 = new BlockList();
  readonly #v6 = new BlockList();

  /** Adds `ADDRESS` or `ADDRESS/PREFIX`; returns a reason when it is neither. */
  add(text: string): string | undefined {
    const slash = text.indexOf("/");
    const address = slash < 0 ? text : text.slice(0, slash);
    const family = isIP(address);
    if (family === 0) return `'${text}' is not an IP address or CIDR prefix`;
    const max = family === 4 ? 32 : 128;
    const bits = slash < 0 ? String(max) : text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max)
      return `'${text}': the prefix length must be 0 to ${max}`;
    if (family === 4) this.#v4.addSubnet(address, Number(bits), "ipv4");
    else this.#v6.addSubnet(address, Number(bits), "ipv6");
    return undefined;
  }

  /** True when `address` (IPv4, IPv6, or IPv4-mapped IPv6 as a dual-stack socket reports it) is in a
   * network of the set. */
  has(address: string): boolean {
    const ip = plainAddress(address);
    const family = isIP(ip);
    if (family === 4) return this.#v4.check(ip, "ipv4");
    return family === 6 && this.#v6.check(ip, "ipv6");
  }
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it stands for. */
export function plainAddress(address: string): string {
  return address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
}
