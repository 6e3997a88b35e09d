// Which firewall the node's rules go to, when the Corefile does not say: the one kube-proxy writes to,
// so that the NOTRACK rules sit beside the DNAT rules they must precede; on a node without kube-proxy,
// nftables where nft works, else iptables.

import type { Run } from "./command.ts";

export type Firewall = "nftables" | "iptables" | "iptables-legacy" | "iptables-nft";

export interface Detected {
  firewall: Firewall;
  /** Why, for the log line. */
  why: string;
}

export async function detectFirewall(run: Run): Promise<Detected> {
  for (const family of ["ip", "ip6"]) {
    if ((await run("nft", ["list", "table", family, "kube-proxy"])).code === 0) {
      return { firewall: "nftables", why: "kube-proxy runs in nftables mode" };
    }
  }
  const legacy = await kubeRules(run, "iptables-legacy-save");
  const nft = await kubeRules(run, "iptables-nft-save");
  // As Kubernetes' iptables-wrapper decides: the backend that holds more of kube-proxy's chains.
  if (legacy > 0 && legacy >= nft)
    return { firewall: "iptables-legacy", why: "kube-proxy's rules are in iptables-legacy" };
  if (nft > 0) return { firewall: "iptables-nft", why: "kube-proxy's rules are in iptables (nf_tables)" };
  if ((await run("nft", ["list", "tables"])).code === 0)
    return { firewall: "nftables", why: "no kube-proxy rules; nft works" };
  return { firewall: "iptables", why: "no kube-proxy rules; nft does not work here" };
}

/** Which backend plain `iptables` is ("iptables v1.8.9 (nf_tables)"); "iptables" when it cannot tell. */
export async function iptablesBackend(run: Run): Promise<Firewall> {
  const r = await run("iptables", ["-V"]);
  if (/\(nf_tables\)/.test(r.stdout)) return "iptables-nft";
  if (/\(legacy\)/.test(r.stdout)) return "iptables-legacy";
  return "iptables";
}

/** Lines of kube-proxy's chains (KUBE-*) in one backend's listing; 0 when it cannot be read. */
async function kubeRules(run: Run, save: string): Promise<number> {
  const r = await run(save, []);
  if (r.code !== 0) return 0;
  return r.stdout.split("\n").filter((l) => l.includes("KUBE-")).length;
}

/** NOTRACK rules to `addresses` that are not ours (no clusterdns mark): node-local-dns writes these. */
export async function foreignNotrack(
  run: Run,
  addresses: readonly string[],
  mark: string,
): Promise<string | undefined> {
  for (const save of [
    "iptables-legacy-save",
    "iptables-nft-save",
    "ip6tables-legacy-save",
    "ip6tables-nft-save",
  ]) {
    const r = await run(save, ["-t", "raw"]);
    if (r.code !== 0) continue;
    for (const line of r.stdout.split("\n")) {
      if (!line.includes("NOTRACK") || line.includes(mark)) continue;
      if (addresses.some((a) => line.includes(` ${a}/`)))
        return `${save.replace("-save", "")}: ${line.trim()}`;
    }
  }
  return undefined;
}
