// etcd [ZONES...] {
//     fallthrough [ZONES...]
//     path PATH
//     endpoint ENDPOINT...
//     credentials USERNAME PASSWORD
//     tls [CERT KEY] [CACERT]
//     min-lease-ttl DURATION
//     max-lease-ttl DURATION
// }

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { SecureContextOptions } from "node:tls";
import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { EtcdClientOptions } from "./client.ts";
import { EtcdClient } from "./client.ts";
import { Records } from "./records.ts";
import { Etcd } from "./etcd.ts";
import {
  argCount,
  fallthroughZones,
  ignoredOption,
  onceEach,
  parseDuration,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { reverseZones } from "../../corefile/keys.ts";

const DEFAULT_ENDPOINT = "http://localhost:2379";
const DEFAULT_PREFIX = "skydns";
/** CoreDNS's etcdTimeout: how long one read may take before the query fails. */
const TIMEOUT_MS = 5000;
const MIN_LEASE_TTL = 30;
const MAX_LEASE_TTL = 86400;

export const setup: Setup = (d, ctx) => {
  const zones = zonesArg(
    d.args.flatMap((t) => (reverseZones(t.text) ?? [t.text]).map((text) => ({ ...t, text }))),
    ctx.zones,
    "etcd",
  );
  const client: EtcdClientOptions = { endpoints: [DEFAULT_ENDPOINT], timeoutMs: TIMEOUT_MS };
  let prefix = DEFAULT_PREFIX;
  let fallthrough: string[] | undefined;
  let minLeaseTtl = MIN_LEASE_TTL;
  let maxLeaseTtl = MAX_LEASE_TTL;
  const log = ctx.log("etcd");
  const once = onceEach("etcd");
  for (const opt of d.block ?? []) {
    once(opt);
    switch (opt.name) {
      case "fallthrough":
        fallthrough = fallthroughZones(opt);
        break;
      case "path":
        argCount(opt, "etcd", 1, 1);
        prefix = opt.args[0].text.replace(/^\/+|\/+$/g, "");
        if (prefix === "") throw configError(opt, "etcd", "'path' needs a path below /");
        break;
      case "endpoint":
        argCount(opt, "etcd", 1, Infinity);
        client.endpoints = opt.args.map(endpoint);
        break;
      case "credentials":
        argCount(opt, "etcd", 2, 2);
        client.credentials = { username: opt.args[0].text, password: opt.args[1].text };
        break;
      case "tls":
        argCount(opt, "etcd", 0, 3);
        client.tls = tlsFiles(opt, ctx.root);
        break;
      case "min-lease-ttl":
        argCount(opt, "etcd", 1, 1);
        minLeaseTtl = leaseTtl(opt.args[0]);
        break;
      case "max-lease-ttl":
        argCount(opt, "etcd", 1, 1);
        maxLeaseTtl = leaseTtl(opt.args[0]);
        break;
      case "upstream":
        ignoredOption(opt, log, "names outside the zone are always resolved through the server itself");
        break;
      case "stubzones":
      case "debug":
        ignoredOption(opt, log, "CoreDNS ignores it too");
        break;
      default:
        throw configError(opt, "etcd", `unknown property '${opt.name}'`);
    }
  }
  if (minLeaseTtl > maxLeaseTtl) {
    throw configError(d, "etcd", `min-lease-ttl ${minLeaseTtl}s is above max-lease-ttl ${maxLeaseTtl}s`);
  }
  const records = new Records({ client: new EtcdClient(client), prefix, minLeaseTtl, maxLeaseTtl });
  const etcd = new Etcd({ zones, fallthrough, records, lookup: ctx.lookup.bind(ctx), log });
  return (next) => etcd.handler(next);
};

/** An endpoint URL: http or https, as etcd's client takes them. */
function endpoint(t: Token): string {
  let u: URL;
  try {
    u = new URL(t.text);
  } catch {
    throw configError(t, "etcd", `invalid endpoint '${t.text}' (want e.g. http://localhost:2379)`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw configError(t, "etcd", `endpoint '${t.text}' must be http:// or https://`);
  }
  return u.href;
}

/** `tls`: none (system CAs), CA; CERT KEY; or CERT KEY CA. The files are read now, so a missing one
 * fails start-up at this line. */
function tlsFiles(opt: Directive, root: string): SecureContextOptions {
  const read = (t: Token): Buffer => {
    try {
      return readFileSync(resolve(root, t.text));
    } catch (err) {
      throw configError(t, "etcd", `cannot read '${t.text}': ${(err as Error).message}`);
    }
  };
  const [a, b, c] = opt.args;
  if (opt.args.length === 1) return { ca: read(a) };
  if (opt.args.length === 0) return {};
  return { cert: read(a), key: read(b), ...(c ? { ca: read(c) } : {}) };
}

/** A lease TTL bound as CoreDNS takes it: seconds ("30") or a Go duration ("5m"), in whole seconds. */
function leaseTtl(t: Token): number {
  const s = /^\d+$/.test(t.text) ? Number(t.text) : Math.floor(parseDuration(t, "etcd") / 1000);
  if (s > 0xffffffff) throw configError(t, "etcd", `TTL '${t.text}' is above 4294967295 seconds`);
  return s;
}
