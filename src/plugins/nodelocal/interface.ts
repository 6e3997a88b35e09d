// The interface that holds the node-local addresses, made with `ip`: a dummy link (as node-cache's
// -setupinterface makes), or, on a kernel built without dummy links, a bridge with no ports, which holds
// an address the same way: local to the node, and no packet ever leaves through it.

import { isIPv6 } from "node:net";
import { mustRun, NodeSetupError, type Run } from "./command.ts";

interface IpAddr {
  ifname: string;
  addr_info?: { local: string; prefixlen: number; scope?: string }[];
  linkinfo?: { info_kind?: string };
  flags?: string[];
}

/** What kinds of link may hold the addresses: the ones this code makes. */
const OURS = new Set(["dummy", "bridge"]);

export interface InterfaceState {
  /** The kind of link, once it exists. */
  kind: string;
  /** Addresses added or removed to reach the wanted set (empty: it was already right). */
  changed: string[];
}

/** Makes `name` hold exactly `addresses` (plus the IPv6 link-local address the kernel gives it) and
 * be up. Refuses an interface of another kind, and an address another interface holds. */
export async function ensureInterface(
  run: Run,
  name: string,
  addresses: readonly string[],
): Promise<InterfaceState> {
  const all = JSON.parse(await mustRun(run, "ip", ["-j", "-d", "addr", "show"])) as IpAddr[];
  for (const a of addresses) {
    const elsewhere = all.find((i) => i.ifname !== name && i.addr_info?.some((x) => x.local === a));
    if (elsewhere) throw heldElsewhere(a, elsewhere.ifname);
  }
  let link = all.find((i) => i.ifname === name);
  const changed: string[] = [];
  if (link === undefined) {
    await createLink(run, name);
    changed.push(`+${name}`);
    link = (JSON.parse(await mustRun(run, "ip", ["-j", "-d", "addr", "show", "dev", name])) as IpAddr[])[0];
  }
  const kind = link?.linkinfo?.info_kind ?? "device";
  if (!OURS.has(kind)) {
    throw new NodeSetupError(
      `interface ${name} exists and is a ${kind}, not a dummy: name another one (nodelocal INTERFACE)`,
    );
  }
  const have = new Set((link?.addr_info ?? []).filter((x) => x.scope !== "link").map((x) => x.local));
  for (const a of addresses) {
    if (have.has(a)) continue;
    const args = ["addr", "add", `${a}/${isIPv6(a) ? 128 : 32}`, "dev", name];
    if (isIPv6(a)) args.push("nodad");
    await mustRun(run, "ip", args);
    changed.push(`+${a}`);
  }
  for (const a of have) {
    if (addresses.includes(a)) continue;
    await mustRun(run, "ip", ["addr", "del", `${a}/${isIPv6(a) ? 128 : 32}`, "dev", name]);
    changed.push(`-${a}`);
  }
  if (!(link?.flags ?? []).includes("UP")) await mustRun(run, "ip", ["link", "set", name, "up"]);
  return { kind, changed };
}

/** A dummy link, or a bridge where the kernel has no dummy links (CONFIG_DUMMY unset). */
async function createLink(run: Run, name: string): Promise<void> {
  const dummy = await run("ip", ["link", "add", name, "type", "dummy"]);
  if (dummy.code === 0) return;
  if (!/unknown device type|not supported/i.test(dummy.stderr)) {
    await mustRun(run, "ip", ["link", "add", name, "type", "dummy"]);
  }
  await mustRun(run, "ip", ["link", "add", name, "type", "bridge"]);
}

function heldElsewhere(address: string, ifname: string): NodeSetupError {
  const ipvs =
    ifname === "kube-ipvs0"
      ? ": kube-proxy's IPVS mode holds Service IPs there, so only the link-local address can be served; drop the Service IP from bind and point the kubelet's clusterDNS at the link-local address"
      : ": take it out of bind, or off that interface";
  return new NodeSetupError(`${address} is already an address of interface ${ifname}${ipvs}`);
}

/** Deletes the interface and with it its addresses; an interface already gone is no error. */
export async function removeInterface(run: Run, name: string): Promise<boolean> {
  const r = await run("ip", ["link", "del", name]);
  if (r.code === 0) return true;
  if (/cannot find device|does not exist/i.test(r.stderr)) return false;
  await mustRun(run, "ip", ["link", "del", name]);
  return false;
}
