// Addresses as the cluster's objects carry them and DNS names spell them.

import { isIP } from "node:net";
import { addressFromReverse, reverseName } from "../../../dns/name.ts";

/** The canonical text of an address (IPv6 in its one lowercase, compressed form); undefined for
 * anything that is not an address. */
export function normalIP(ip: unknown): string | undefined {
  if (typeof ip !== "string") return undefined;
  const v = isIP(ip);
  if (v === 4) return ip;
  if (v === 6) return addressFromReverse(reverseName(ip)!);
  return undefined;
}

/** The dashed form of an address, as endpoint and pod names use it: 10.244.4.3 -> 10-244-4-3. */
export function dashed(ip: string): string {
  return ip.replace(/[.:]/g, "-");
}
