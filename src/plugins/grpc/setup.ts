// grpc FROM TO... {
//     except IGNORED_NAMES...
//     tls [CERT KEY] [CA]
//     tls_servername NAME
//     policy random|round_robin|sequential
//     fallthrough [ZONES...]
// }
// TO: IP (port 53, as CoreDNS), IP:PORT, [IPv6]:PORT, grpc://IP (port 443), unix://PATH, or a
// resolv.conf-style file whose nameservers are the upstreams. `tls` or `tls_servername` turn TLS on.

import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { GrpcOptions } from "./grpc.ts";
import type { GrpcAddress } from "./upstream.ts";
import { Grpc, GRPC_DEFAULTS, NAME } from "./grpc.ts";
import { exceptNames, fromTo, policyOption, tlsOption } from "../forward/upstream-options.ts";
import { fromFile, hostPort } from "../forward/upstream-address.ts";
import { argCount, blockOptions, fallthroughZones, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import "./metrics.ts";

const DNS_PORT = 53;
/** CoreDNS's port for grpc:// without one. */
const GRPC_PORT = 443;

export const setup: Setup = (d, ctx) => {
  const grpc = new Grpc(parseGrpc(d, ctx.root), ctx.log(NAME));
  ctx.onShutdown(() => grpc.close());
  return (next) => grpc.handler(next);
};

/** The directive's options, checked; every mistake is a ConfigError at its file:line. */
export function parseGrpc(d: Directive, root: string): GrpcOptions {
  const o: GrpcOptions = {
    ...GRPC_DEFAULTS,
    ...fromTo(d, NAME, (t) => upstreams(t, root)),
    except: [],
    tls: undefined,
    fallthrough: undefined,
  };
  for (const opt of d.block ?? []) noBlock(opt, NAME);
  blockOptions(d, NAME, {
    except: (opt) => o.except.push(...exceptNames(opt, NAME)),
    tls: (opt) => (o.tls = tlsOption(opt, { root, was: o.tls ?? {}, plugin: NAME })),
    tls_servername: (opt) => {
      argCount(opt, NAME, 1, 1);
      o.tls = { ...o.tls, servername: opt.args[0].text };
    },
    policy: (opt) => (o.policy = policyOption(opt, NAME)),
    fallthrough: (opt) => (o.fallthrough = fallthroughZones(opt)),
  });
  return o;
}

/** The upstreams one TO stands for. */
function upstreams(t: Token, root: string): GrpcAddress[] {
  const scheme = /^([a-z0-9+.-]+):\/\//i.exec(t.text);
  const name = scheme?.[1].toLowerCase();
  const rest = scheme ? t.text.slice(scheme[0].length) : t.text;
  if (name === "unix") {
    if (rest === "") throw configError(t, NAME, `'${t.text}': no socket path`);
    const path = resolve(root, rest);
    return [{ host: "", port: 0, path, to: `unix://${path}` }];
  }
  if (name !== undefined && name !== "grpc" && name !== "dns")
    throw configError(
      t,
      NAME,
      `'${t.text}': TO is IP:PORT, grpc://IP:PORT, unix://PATH or a resolv.conf file`,
    );
  const addr = hostPort(rest, name === "grpc" ? GRPC_PORT : DNS_PORT);
  if (typeof addr === "string") throw configError(t, NAME, `'${t.text}': ${addr}`);
  if (addr) return [addr];
  if (scheme) throw configError(t, NAME, `'${t.text}' is not an IP address`);
  return fromFile(t, resolve(root, rest), NAME);
}
