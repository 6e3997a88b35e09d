// This server's own addresses, from which the kubernetes plugin finds the services that select its pod
// (the name server's addresses, ns.dns.<zone>) as CoreDNS does: the pod's address when the Deployment
// passes it in (POD_IP, or POD_IPS for dual-stack, from the downward API's status.podIP(s)), else the
// addresses the server block binds to, else every address of the machine's interfaces. Loopback,
// wildcard and link-local addresses (fe80::/10, 169.254.0.0/16: meaningless off the link, and a
// record cannot carry an IPv6 scope) say nothing a client elsewhere could use, and are left out.

import { networkInterfaces, type NetworkInterfaceInfo } from "node:os";
import { isWildcardAddress } from "../../dns/wildcard.ts";
import { normalIP } from "./store/slim.ts";

export function localIPs(
  env: NodeJS.ProcessEnv,
  bind: readonly string[],
  interfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces,
): string[] {
  const usable = (list: readonly (string | undefined)[]) => {
    const out: string[] = [];
    for (const a of list) {
      const ip = normalIP(a?.trim());
      if (ip === undefined || isWildcardAddress(ip) || ip === "::1" || ip.startsWith("127.")) continue;
      if (/^fe[89ab]/.test(ip) || ip.startsWith("169.254.")) continue;
      if (!out.includes(ip)) out.push(ip);
    }
    return out;
  };
  const fromEnv = usable([env.POD_IP, ...(env.POD_IPS ?? "").split(",")]);
  if (fromEnv.length > 0) return fromEnv;
  const bound = usable(bind);
  if (bound.length > 0) return bound;
  return usable(
    Object.values(interfaces())
      .flat()
      .map((i) => (i === undefined || i.internal ? undefined : i.address.split("%")[0])),
  );
}
