// The `server` label of a listener, as CoreDNS names a server in its logs and metrics ("dns://:53"),
// and of each address of a group bound to several: CoreDNS runs a server per address (NodeLocal
// DNSCache's usual `bind 169.254.20.10 10.96.0.10`), so its series carry one label each.

import { joinHostPort } from "../dns/host-port.ts";
import { WILDCARD_ADDRESSES } from "../dns/wildcard.ts";

/** "TRANSPORT://HOST:PORT", an IPv6 host in brackets; HOST "" for every address. */
export function serverLabel(transport: string, host: string, port: number): string {
  return `${transport}://${joinHostPort(host, port)}`;
}

/** Each bind address's label, when there are two or more (one address, or every address: the
 * listener's own label). */
export function addressLabels(g: {
  bind: readonly string[];
  transport: string;
  port: number;
}): Map<string, string> | undefined {
  if (g.bind === WILDCARD_ADDRESSES || g.bind.length < 2) return undefined;
  return new Map(g.bind.map((a) => [a, serverLabel(g.transport, a, g.port)]));
}
