// Which address geoip looks up for a query: the client's, or with `edns-subnet` the address of the
// query's EDNS Client Subnet option (RFC 7871 6) when it has a well-formed one.

import type { Edns } from "../../dns/message.ts";
import { EdnsOption } from "../../dns/constants.ts";
import { plainAddress } from "../../dns/nets.ts";
import type { MetaQuery } from "../metadata/labels.ts";

/** The address to look up for `q`. */
export function clientAddress(q: MetaQuery, ednsSubnet: boolean): string {
  if (ednsSubnet) {
    const edns = q.edns ?? q.msg?.edns;
    const ecs = edns === undefined ? undefined : subnetAddress(edns);
    if (ecs !== undefined) return ecs;
  }
  // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d.
  return plainAddress(q.remoteAddress);
}

/** The ADDRESS of the first client subnet option, padded with zeros to a whole address, as text;
 * undefined without one, or for one that breaks RFC 7871's rules (unknown family, a prefix longer
 * than the family's addresses, more octets than the prefix needs). */
export function subnetAddress(edns: Edns): string | undefined {
  const o = edns.options.find((x) => x.code === EdnsOption.ECS);
  if (o === undefined || o.data.length < 4) return undefined;
  const d = o.data;
  const family = (d[0] << 8) | d[1];
  const prefix = d[2];
  const size = family === 1 ? 4 : family === 2 ? 16 : 0;
  if (size === 0 || prefix > size * 8 || d.length - 4 !== Math.ceil(prefix / 8)) return undefined;
  const a = new Uint8Array(size);
  a.set(d.subarray(4));
  if (size === 4) return a.join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((a[i] << 8) | a[i + 1]).toString(16));
  return groups.join(":");
}
