// The kube-dns ConfigMap (kube-system/kube-dns) as a Corefile, translated as kubeadm translated it when
// it moved clusters from kube-dns to CoreDNS:
//   stubDomains          {"DOMAIN": ["IP[:PORT]", ...]}  -> a block `DOMAIN:53` forwarding everything
//   upstreamNameservers  ["IP[:PORT]", ...]              -> `forward .` of the main block
//   federations          {"NAME": "DOMAIN"}              -> refused: CoreDNS dropped federation in 1.7
// Hostnames and placeholders among the servers are left out with a warning (forward takes addresses
// only), and a stub domain left with none is left out: the translation is then `lossy` (exit 1), so a
// script that writes the output to a Corefile does not lose them unnoticed. kube-dns's defaults (no
// stub domains, the node's resolv.conf) give kubeadm's Corefile unchanged.

import { isIP } from "node:net";
import { hostPort } from "../plugins/forward/upstream-address.ts";
import { kubeadmCorefile, type StubDomain } from "./kubeadm-corefile.ts";
import { InputError, type ConfigMapData } from "../corefile/configmap.ts";
import { jsonValue } from "./json-value.ts";

export interface Translation {
  corefile: string;
  /** One line each: what was left out, and why. */
  warnings: string[];
  /** A server or stub domain the ConfigMap configures is not in the Corefile. */
  lossy: boolean;
}

const KEYS = ["stubDomains", "upstreamNameservers", "federations"];

export function translateKubeDns(cm: ConfigMapData, name: string, domain: string): Translation {
  const warnings: string[] = [];
  let lossy = false;
  const lost = (warning: string) => {
    warnings.push(warning);
    lossy = true;
  };
  const at = (key: string) => `${name}:${cm.lineOf(key)}: ${key}`;
  const json = (key: string): unknown => jsonValue(cm, name, key);
  for (const key of cm.data.keys())
    if (!KEYS.includes(key))
      warnings.push(`${at(key)} is not a kube-dns setting (${KEYS.join(", ")}): left out`);

  if (cm.data.has("federations")) {
    const fed = json("federations");
    if (fed !== null && typeof fed === "object" && Object.keys(fed).length > 0)
      throw new InputError(
        `${at("federations")}: kube-dns federations are not supported by clusterdns (CoreDNS dropped them in 1.7): remove the key; names under FEDERATION.NAMESPACE.svc.${domain} will not resolve`,
      );
  }

  /** The entries forward can take, warning about the hostnames left out. */
  const addresses = (key: string, what: string, list: unknown): string[] => {
    if (!Array.isArray(list) || !list.every((s) => typeof s === "string"))
      throw new InputError(`${at(key)}: ${what} must be a list of "IP" or "IP:PORT" strings`);
    const out: string[] = [];
    for (const entry of list) {
      const addr = hostPort(entry);
      if (typeof addr === "string") throw new InputError(`${at(key)}: ${what}: '${entry}': ${addr}`);
      if (addr) out.push(entry);
      else if (/^[A-Z][A-Z0-9]*_[A-Z0-9_]*$/.test(entry) || /^<.*>$|\$\{.*\}/.test(entry))
        lost(
          `${at(key)}: ${what}: ${entry} is a placeholder, not an address: left out (put the server's IP address there)`,
        );
      else if (isHostname(entry.replace(/:\d+$/, "")))
        lost(`${at(key)}: ${what}: ${entry} is a hostname: left out (forward takes IP addresses only)`);
      else
        throw new InputError(`${at(key)}: ${what}: '${entry}' is not an IP address, IP:PORT or [IPv6]:PORT`);
    }
    return out;
  };

  let upstreams = ["/etc/resolv.conf"];
  if (cm.data.has("upstreamNameservers")) {
    const listed = json("upstreamNameservers");
    const kept = addresses("upstreamNameservers", "upstreamNameservers", listed);
    if (kept.length > 0) upstreams = kept;
    else if (Array.isArray(listed) && listed.length > 0)
      throw new InputError(
        `${at("upstreamNameservers")}: every server is a hostname, and forward takes IP addresses only: list their addresses instead`,
      );
  }

  const stubs: StubDomain[] = [];
  if (cm.data.has("stubDomains")) {
    const map = json("stubDomains");
    if (map === null || typeof map !== "object" || Array.isArray(map))
      throw new InputError(`${at("stubDomains")} must be a map of domain to servers`);
    for (const [stub, list] of Object.entries(map)) {
      if (!isHostname(stub) || isIP(stub))
        throw new InputError(`${at("stubDomains")}: '${stub}' is not a domain`);
      const servers = addresses("stubDomains", stub, list);
      // kube-dns's dnsmasq matches domains without regard to case or a final dot and asks every
      // server of one: a domain written twice is one block (a Corefile may not serve a zone twice).
      const same = stubs.find((s) => sameDomain(s.domain, stub));
      if (same) {
        warnings.push(
          `${at("stubDomains")}: ${stub} is ${same.domain} written again: its servers are joined to it`,
        );
        same.servers.push(...servers.filter((a) => !same.servers.includes(a)));
      } else if (servers.length > 0) stubs.push({ domain: stub, servers });
      else lost(`${at("stubDomains")}: ${stub} has no server left: the domain is left out`);
    }
  }
  return { corefile: kubeadmCorefile({ domain, upstreams, stubs }), warnings, lossy };
}

const sameDomain = (a: string, b: string) =>
  a.toLowerCase().replace(/\.$/, "") === b.toLowerCase().replace(/\.$/, "");

function isHostname(s: string): boolean {
  return /^(?=.{1,253}\.?$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i.test(
    s,
  );
}
