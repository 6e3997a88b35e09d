// The `server` label of a listener group bound to several addresses: CoreDNS runs a server per address
// (NodeLocal DNSCache's usual `bind 169.254.20.10 10.96.0.10`), so its series carry one label each.

import { joinHostPort } from "../dns/host-port.ts";
import { WILDCARD_ADDRESSES } from "../dns/wildcard.ts";

/** Each bind address's label, when there are two or more (one address, or every address: the
 * listener's own label). */
export function addressLabels(g: {
  bind: readonly string[];
  transport: string;
  port: number;
}): Map<string, string> | undefined {
  if (g.bind === WILDCARD_ADDRESSES || g.bind.length < 2) return undefined;
  return new Map(g.bind.map((a) => [a, `${g.transport}://${joinHostPort(a, g.port)}`]));
}
