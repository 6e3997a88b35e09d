// The registry: every plugin clusterdns has, in the order a query passes through them. This list is the
// one place that holds both the directive names and their order (after CoreDNS's plugin.cfg). main.ts
// hands it to the server; the server knows only the Registry contract (src/setup/registry.ts).

import type { Registry, Setup } from "../setup/registry.ts";
import { setup as acl } from "./acl/setup.ts";
import { setup as any } from "./any/setup.ts";
import { setup as auto } from "./auto/setup.ts";
import { setup as autopath } from "./autopath/setup.ts";
import { setup as bind } from "./bind/setup.ts";
import { setup as bufsize } from "./bufsize/setup.ts";
import { setup as cache } from "./cache/setup.ts";
import { setup as cancel } from "./cancel/setup.ts";
import { setup as chaos } from "./chaos/setup.ts";
import { setup as dnstap } from "./dnstap/setup.ts";
import { setup as dns64 } from "./dns64/setup.ts";
import { setup as dnssec } from "./dnssec/setup.ts";
import { setup as debug } from "./debug/setup.ts";
import { setup as erratic } from "./erratic/setup.ts";
import { setup as errors } from "./errors/setup.ts";
import { setup as etcd } from "./etcd/setup.ts";
import { setup as file } from "./file/setup.ts";
import { setup as forward } from "./forward/setup.ts";
import { setup as geoip } from "./geoip/setup.ts";
import { setup as grpc } from "./grpc/setup.ts";
import { setup as header } from "./header/setup.ts";
import { setup as health } from "./health/setup.ts";
import { setup as hosts } from "./hosts/setup.ts";
import { setup as k8sExternal } from "./k8s_external/setup.ts";
import { setup as insights } from "./insights/setup.ts";
import { setup as kubernetes } from "./kubernetes/setup.ts";
import { setup as loadbalance } from "./loadbalance/setup.ts";
import { setup as local } from "./local/setup.ts";
import { setup as log } from "./log/setup.ts";
import { setup as loop } from "./loop/setup.ts";
import { setup as metadata } from "./metadata/setup.ts";
import { setup as minimal } from "./minimal/setup.ts";
import { setup as multisocket } from "./multisocket/setup.ts";
import { setup as nodelocal } from "./nodelocal/setup.ts";
import { setup as nsid } from "./nsid/setup.ts";
import { setup as on } from "./on/setup.ts";
import { setup as prometheus } from "./prometheus/setup.ts";
import { setup as ready } from "./ready/setup.ts";
import { setup as reload } from "./reload/setup.ts";
import { setup as rewrite } from "./rewrite/setup.ts";
import { setup as root } from "./root/setup.ts";
import { setup as rrl } from "./rrl/setup.ts";
import { setup as secondary } from "./secondary/setup.ts";
import { setup as sign } from "./sign/setup.ts";
import { setup as template } from "./template/setup.ts";
import { setup as transfer } from "./transfer/setup.ts";
import { setup as tsig } from "./tsig/setup.ts";
import { setup as timeouts } from "./timeouts/setup.ts";
import { setup as tls } from "./tls/setup.ts";
import { setup as trace } from "./trace/setup.ts";
import { setup as view } from "./view/setup.ts";
import { setup as whoami } from "./whoami/setup.ts";

/** Execution order: a new plugin goes where CoreDNS's plugin.cfg puts it (index.test.ts checks). */
export const plugins: Registry = new Map<string, Setup>([
  // First: the folder every other directive of the block reads relative paths from.
  ["root", root],
  ["metadata", metadata],
  ["geoip", geoip],
  ["cancel", cancel],
  // A setting of tls:// and https:// blocks (their certificate), not a handler.
  ["tls", tls],
  ["timeouts", timeouts],
  ["multisocket", multisocket],
  ["reload", reload],
  ["nsid", nsid],
  ["bufsize", bufsize],
  ["bind", bind],
  // Not in CoreDNS (node-cache does it with flags). Right after bind, whose addresses it reads: its
  // start-up puts them on the node before health, ready and the DNS listeners bind them.
  ["nodelocal", nodelocal],
  // Not in CoreDNS's plugin.cfg (an external plugin there); a setting of the block, so its place
  // changes nothing.
  ["rrl", rrl],
  // Before errors, whose setup reads the block's debug.
  ["debug", debug],
  ["trace", trace],
  ["ready", ready],
  ["health", health],
  ["prometheus", prometheus],
  // Not in CoreDNS: a finish hook and a listener, like prometheus; its place changes nothing.
  ["insights", insights],
  ["errors", errors],
  ["log", log],
  ["dnstap", dnstap],
  ["local", local],
  ["dns64", dns64],
  ["acl", acl],
  ["any", any],
  ["chaos", chaos],
  ["loadbalance", loadbalance],
  ["tsig", tsig],
  ["cache", cache],
  ["rewrite", rewrite],
  ["header", header],
  ["dnssec", dnssec],
  ["autopath", autopath],
  ["minimal", minimal],
  ["template", template],
  ["transfer", transfer],
  ["hosts", hosts],
  ["k8s_external", k8sExternal],
  ["kubernetes", kubernetes],
  ["file", file],
  ["auto", auto],
  ["secondary", secondary],
  ["etcd", etcd],
  ["loop", loop],
  ["forward", forward],
  ["grpc", grpc],
  ["erratic", erratic],
  ["whoami", whoami],
  ["on", on],
  // Writes signed zone files for `file` to serve; it adds no handler.
  ["sign", sign],
  // A setting of the block (which queries it answers), read by the server: it adds no handler.
  ["view", view],
]);
