// The registry: every plugin clusterdns has, in the order a query passes through them. This list is the
// one place that holds both the directive names and their order (after CoreDNS's plugin.cfg). main.ts
// hands it to the server; the server knows only the Registry contract (src/setup/registry.ts).

import type { Registry, Setup } from "../setup/registry.ts";

/** A plugin's setup whose module is loaded when a Corefile first uses it: a kubeadm Corefile names 10
 * of the 52 plugins, and loading the other 42 took 2.8 MB of JS heap and 8.7 MB of RSS in every
 * thread in a bare Node 24 (from dist/; 1.3-5 MiB of a server's RSS). The server awaits every setup. */
function lazy(load: () => Promise<{ setup: Setup }>): Setup {
  let setup: Setup | undefined;
  return async (d, ctx) => {
    setup ??= (await load()).setup;
    return setup(d, ctx);
  };
}

/** Execution order: a new plugin goes where CoreDNS's plugin.cfg puts it (index.test.ts checks). */
export const plugins: Registry = new Map<string, Setup>([
  // First: the folder every other directive of the block reads relative paths from.
  ["root", lazy(() => import("./root/setup.ts"))],
  ["metadata", lazy(() => import("./metadata/setup.ts"))],
  ["geoip", lazy(() => import("./geoip/setup.ts"))],
  ["cancel", lazy(() => import("./cancel/setup.ts"))],
  // A setting of tls:// and https:// blocks (their certificate), not a handler.
  ["tls", lazy(() => import("./tls/setup.ts"))],
  ["timeouts", lazy(() => import("./timeouts/setup.ts"))],
  ["multisocket", lazy(() => import("./multisocket/setup.ts"))],
  ["reload", lazy(() => import("./reload/setup.ts"))],
  ["nsid", lazy(() => import("./nsid/setup.ts"))],
  ["bufsize", lazy(() => import("./bufsize/setup.ts"))],
  ["bind", lazy(() => import("./bind/setup.ts"))],
  // Not in CoreDNS (node-cache does it with flags). Right after bind, whose addresses it reads: its
  // start-up puts them on the node before health, ready and the DNS listeners bind them.
  ["nodelocal", lazy(() => import("./nodelocal/setup.ts"))],
  // Not in CoreDNS's plugin.cfg (an external plugin there); a setting of the block, so its place
  // changes nothing.
  ["rrl", lazy(() => import("./rrl/setup.ts"))],
  // Before errors, whose setup reads the block's debug.
  ["debug", lazy(() => import("./debug/setup.ts"))],
  ["trace", lazy(() => import("./trace/setup.ts"))],
  ["ready", lazy(() => import("./ready/setup.ts"))],
  ["health", lazy(() => import("./health/setup.ts"))],
  ["prometheus", lazy(() => import("./prometheus/setup.ts"))],
  // Not in CoreDNS: a finish hook and a listener, like prometheus; its place changes nothing.
  ["insights", lazy(() => import("./insights/setup.ts"))],
  ["errors", lazy(() => import("./errors/setup.ts"))],
  ["log", lazy(() => import("./log/setup.ts"))],
  ["dnstap", lazy(() => import("./dnstap/setup.ts"))],
  ["local", lazy(() => import("./local/setup.ts"))],
  ["dns64", lazy(() => import("./dns64/setup.ts"))],
  ["acl", lazy(() => import("./acl/setup.ts"))],
  ["any", lazy(() => import("./any/setup.ts"))],
  ["chaos", lazy(() => import("./chaos/setup.ts"))],
  ["loadbalance", lazy(() => import("./loadbalance/setup.ts"))],
  ["tsig", lazy(() => import("./tsig/setup.ts"))],
  ["cache", lazy(() => import("./cache/setup.ts"))],
  ["rewrite", lazy(() => import("./rewrite/setup.ts"))],
  ["header", lazy(() => import("./header/setup.ts"))],
  ["dnssec", lazy(() => import("./dnssec/setup.ts"))],
  ["autopath", lazy(() => import("./autopath/setup.ts"))],
  ["minimal", lazy(() => import("./minimal/setup.ts"))],
  ["template", lazy(() => import("./template/setup.ts"))],
  ["transfer", lazy(() => import("./transfer/setup.ts"))],
  ["hosts", lazy(() => import("./hosts/setup.ts"))],
  ["k8s_external", lazy(() => import("./k8s_external/setup.ts"))],
  ["kubernetes", lazy(() => import("./kubernetes/setup.ts"))],
  ["file", lazy(() => import("./file/setup.ts"))],
  ["auto", lazy(() => import("./auto/setup.ts"))],
  ["secondary", lazy(() => import("./secondary/setup.ts"))],
  ["etcd", lazy(() => import("./etcd/setup.ts"))],
  ["loop", lazy(() => import("./loop/setup.ts"))],
  ["forward", lazy(() => import("./forward/setup.ts"))],
  ["grpc", lazy(() => import("./grpc/setup.ts"))],
  ["erratic", lazy(() => import("./erratic/setup.ts"))],
  ["whoami", lazy(() => import("./whoami/setup.ts"))],
  ["on", lazy(() => import("./on/setup.ts"))],
  // Writes signed zone files for `file` to serve; it adds no handler.
  ["sign", lazy(() => import("./sign/setup.ts"))],
  // A setting of the block (which queries it answers), read by the server: it adds no handler.
  ["view", lazy(() => import("./view/setup.ts"))],
]);
