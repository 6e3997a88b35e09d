// bind: which local addresses a server block listens on. Interface names expand to the addresses the
// interface has now (at start or reload), as in CoreDNS.

import { isIP } from "node:net";
import type { NetworkInterfaceInfo } from "node:os";

export type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** The addresses `spec` stands for: itself if it is an IP address, the interface's addresses if it
 * names one, else a string saying why it is neither. */
export function resolveBind(spec: string, interfaces: Interfaces): string[] | string {
  if (isIP(spec)) return [spec];
  const iface = interfaces[spec];
  if (!iface) return `'${spec}' is neither an IP address nor a network interface of this host`;
  // Link-local IPv6 needs its interface as scope to be bound.
  return iface.map((a) =>
    a.family === "IPv6" && /^fe[89ab]/i.test(a.address) ? `${a.address}%${spec}` : a.address,
  );
}
