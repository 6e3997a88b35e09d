// A node and a pod, each a network namespace, joined by a veth pair as a CNI joins a pod to its node:
// the pod has 10.244.0.5 and a default route through the node's 10.244.0.1. What the node holds
// locally (a node-local DNS address on an interface of its own) the pod reaches through that route.
// Also what a node holds before clusterdns comes: kube-proxy's DNAT of a Service IP, an interface
// another program (or a crash) left with an address on it.

import { execFile, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { createNetns, NetnsError, type Netns } from "./netns.ts";
import { waitForLine } from "./netns-cluster.ts";

const run = promisify(execFile);

export const NODE_IP = "10.244.0.1";
export const POD_IP = "10.244.0.5";

export interface NodeAndPod {
  node: Netns;
  pod: Netns;
  destroy(): Promise<void>;
}

/** Both namespaces; the pod's resolv.conf is `podResolvConf`, the node's points at 127.0.0.1. */
export async function createNodeAndPod(podResolvConf: string): Promise<NodeAndPod> {
  const node = await createNetns(undefined, "nameserver 127.0.0.1\n");
  let pod: Netns | undefined;
  try {
    pod = await createNetns(undefined, podResolvConf);
    const ip = (...args: string[]) =>
      run("ip", args).catch((err: Error & { stderr?: string }) => {
        throw new NetnsError(`ip ${args.join(" ")}: ${err.stderr?.trim() ?? err.message}`);
      });
    await ip(
      "link",
      "add",
      "veth-n",
      "netns",
      node.name,
      "type",
      "veth",
      "peer",
      "name",
      "veth-p",
      "netns",
      pod.name,
    );
    await ip("-n", node.name, "addr", "add", `${NODE_IP}/24`, "dev", "veth-n");
    await ip("-n", node.name, "link", "set", "veth-n", "up");
    await ip("-n", pod.name, "addr", "add", `${POD_IP}/24`, "dev", "veth-p");
    await ip("-n", pod.name, "link", "set", "veth-p", "up");
    await ip("-n", pod.name, "route", "add", "default", "via", NODE_IP);
  } catch (err) {
    await pod?.destroy();
    await node.destroy();
    throw err;
  }
  const p = pod;
  return {
    node,
    pod: p,
    async destroy() {
      await p.destroy();
      await node.destroy();
    },
  };
}

/** kube-proxy's DNAT of `serviceIp`:53 (UDP and TCP) to `to` ("10.244.0.1:5353") for queries that come
 * in from pods, in a table named as kube-proxy's nftables mode names its own (nodelocal's firewall
 * detection reads that name). */
export async function kubeProxyDnat(node: Netns, serviceIp: string, to: string): Promise<void> {
  const table = `table ip kube-proxy {
  chain dns { type nat hook prerouting priority dstnat; policy accept;
    ip daddr ${serviceIp} udp dport 53 dnat to ${to}
    ip daddr ${serviceIp} tcp dport 53 dnat to ${to}
  }
}
`;
  const r = await node.exec("nft", ["-f", "-"], { input: table });
  if (r.code !== 0) throw new NetnsError(`nft -f (kube-proxy's DNAT): ${r.stderr.trim()}`);
}

/** An interface `name` of `kind` (bridge: every kernel has them) holding `cidr`, up. */
export async function addInterface(node: Netns, name: string, cidr: string, kind = "bridge"): Promise<void> {
  for (const args of [
    ["link", "add", name, "type", kind],
    ["addr", "add", cidr, "dev", name],
    ["link", "set", name, "up"],
  ]) {
    const r = await node.exec("ip", args);
    if (r.code !== 0) throw new NetnsError(`ip ${args.join(" ")}: ${r.stderr.trim()}`);
  }
}

/** A hostNetwork client: a process in `node` holding a UDP socket connected to each address:53 (its
 * local address is then that address too), until it is killed. */
export async function connectedClient(node: Netns, addresses: string[]): Promise<ChildProcess> {
  const script = `const dgram = require("node:dgram");
let left = ${addresses.length};
for (const a of ${JSON.stringify(addresses)}) {
  dgram.createSocket("udp4").connect(53, a, () => --left === 0 && console.log("connected"));
}
setInterval(() => {}, 60000);`;
  const client = node.spawn(process.execPath, ["-e", script]);
  await waitForLine(client, /^connected$/, "the client");
  return client;
}
