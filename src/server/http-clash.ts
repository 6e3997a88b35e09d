// An HTTP endpoint (health, ready, prometheus) on a TCP address a DNS server block listens on could
// never open: DNS holds TCP on its port as well as UDP. Refused at the directive's line once every
// block is set up (start-up, reload, -validate), where at start-up the bind would fail and read as a
// port another process holds.

import { isIP } from "node:net";
import { configError } from "../corefile/errors.ts";
import type { Token } from "../corefile/types.ts";
import type { HttpListen } from "../setup/instance.ts";

/** What a DNS listener group binds: its port, its addresses, and the first key that named it. */
export interface DnsListen {
  readonly port: number;
  readonly bind: readonly string[];
  readonly key?: Token;
}

/** Throws a ConfigError at the first HTTP endpoint whose address a DNS group holds. */
export function checkHttpAddresses(listens: Iterable<HttpListen>, groups: Iterable<DnsListen>): void {
  const dns = [...groups];
  for (const { addr, at, directive } of listens) {
    if (addr.port === 0) continue;
    const g = dns.find((x) => x.port === addr.port && x.bind.some((b) => sameTcpAddress(b, addr.host)));
    if (g?.key === undefined) continue;
    throw configError(
      at,
      directive,
      `${addr.text} is taken by the DNS server block '${g.key.text}' (${g.key.file}:${g.key.line}), which listens on TCP as well as UDP: give ${directive} another port`,
    );
  }
}

/** Whether a DNS listener on `dns` and an HTTP one on `http` (undefined: every address, dual-stack)
 * would bind the same TCP address. A host name's address is known only once resolved: it is taken
 * to meet a wildcard, and localhost the loopback addresses. */
function sameTcpAddress(dns: string, http: string | undefined): boolean {
  if (http === undefined || http === dns) return true;
  const family = isIP(http);
  if (dns === "0.0.0.0") return family !== 6;
  if (dns === "::") return family !== 4;
  return http === "localhost" && (dns === "127.0.0.1" || dns === "::1");
}
