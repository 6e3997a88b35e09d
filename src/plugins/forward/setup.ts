// forward FROM TO... {
//     except IGNORED_NAMES...
//     force_tcp
//     prefer_udp
//     expire DURATION
//     max_idle_conns INTEGER
//     max_fails INTEGER
//     max_connect_attempts INTEGER
//     policy random|round_robin|sequential
//     health_check DURATION [no_rec] [domain FQDN]
//     max_concurrent MAX
//     next RCODE...
//     next_on_nodata
//     failover RCODE...
//     failfast_all_unhealthy_upstreams
//     tls [CERT KEY] [CA]
//     tls_servername NAME
//     max_age DURATION
//     read_timeout DURATION
// }

import type { Setup } from "../../setup/registry.ts";
import type { Directive } from "../../corefile/types.ts";
import type { ForwardOptions } from "./forward.ts";
import { Forward, FORWARD_DEFAULTS, NAME } from "./forward.ts";
import { exceptNames, fromTo, policyOption, tlsOption, zoneName } from "./upstream-options.ts";
import { parseTo } from "./upstream-address.ts";
import { FORWARD_TAPS } from "./tap.ts";
import { offered } from "../offers.ts";
import { argCount, blockOptions, noBlock, parseIntArg, parseTimerDuration } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import "./metrics.ts";
import { Rcode, rcodeFromName } from "../../dns/constants.ts";

export const setup: Setup = (d, ctx) => {
  const taps = offered(ctx.block.shared, FORWARD_TAPS) ?? [];
  const forward = new Forward(parseForward(d, ctx.root), ctx.log(NAME), taps);
  ctx.onShutdown(() => forward.close());
  return (next) => forward.handler(next);
};

/** The directive's options, checked; every mistake is a ConfigError at its file:line. */
export function parseForward(d: Directive, root: string): ForwardOptions {
  const o: ForwardOptions = {
    ...FORWARD_DEFAULTS,
    ...fromTo(d, NAME, (t) => parseTo(t, root, NAME)),
    except: [],
    forceTcp: false,
    preferUdp: false,
    healthCheck: { ...FORWARD_DEFAULTS.healthCheck },
    tls: {},
    dohMethod: "POST",
    next: new Set(),
    nextOnNodata: false,
    failover: new Set(),
    failfastAllUnhealthy: false,
    maxConnectAttempts: undefined,
  };
  for (const opt of d.block ?? []) noBlock(opt, NAME);
  blockOptions(d, NAME, {
    except: (opt) => o.except.push(...exceptNames(opt, NAME)),
    force_tcp: flag(() => (o.forceTcp = true)),
    prefer_udp: flag(() => (o.preferUdp = true)),
    expire: (opt) => (o.expireMs = duration(opt)),
    max_idle_conns: (opt) => (o.maxIdleConns = int(opt)),
    max_fails: (opt) => (o.maxFails = int(opt)),
    max_connect_attempts: (opt) => (o.maxConnectAttempts = int(opt)),
    max_concurrent: (opt) => (o.maxConcurrent = int(opt)),
    policy: (opt) => (o.policy = policyOption(opt, NAME)),
    health_check: (opt) => healthCheck(opt, o.healthCheck),
    next: (opt) => (o.next = rcodes(opt, false)),
    next_on_nodata: flag(() => (o.nextOnNodata = true)),
    failover: (opt) => (o.failover = rcodes(opt, true)),
    failfast_all_unhealthy_upstreams: flag(() => (o.failfastAllUnhealthy = true)),
    tls: (opt) => (o.tls = tlsOption(opt, { root, was: o.tls, plugin: NAME })),
    tls_servername: (opt) => {
      argCount(opt, NAME, 1, 1);
      o.tls = { ...o.tls, servername: opt.args[0].text };
    },
    max_age: (opt) => (o.maxAgeMs = duration(opt)),
    read_timeout: (opt) => (o.readTimeoutMs = positive(opt, duration(opt))),
    doh_method: (opt) => {
      argCount(opt, NAME, 1, 1);
      const m = opt.args[0].text;
      if (m !== "GET" && m !== "POST")
        throw configError(opt.args[0], NAME, "doh_method must be either POST or GET");
      o.dohMethod = m;
    },
    resolver: unsupported("TO must be an IP address or a resolv.conf file; hostnames are not resolved"),
  });
  return o;
}

/** An option without arguments that sets what `set` sets. */
function flag(set: () => void): (opt: Directive) => void {
  return (opt) => {
    argCount(opt, NAME, 0, 0);
    set();
  };
}

/** An option of one non-negative integer. */
function int(opt: Directive): number {
  argCount(opt, NAME, 1, 1);
  return parseIntArg(opt.args[0], NAME, 0, 2 ** 31 - 1);
}

/** An option of one duration, in milliseconds. */
function duration(opt: Directive): number {
  argCount(opt, NAME, 1, 1);
  return parseTimerDuration(opt.args[0], NAME);
}

/** `ms`, the duration the option's first argument gives, when it is above 0. */
function positive(opt: Directive, ms: number): number {
  if (ms <= 0) throw configError(opt.args[0], NAME, `${opt.name} needs a positive duration`);
  return ms;
}

function unsupported(why: string): (opt: Directive) => void {
  return (opt) => {
    throw configError(opt, NAME, `'${opt.name}' is not supported: ${why}`);
  };
}

/** health_check DURATION [no_rec] [domain FQDN], into the health check's settings. */
function healthCheck(opt: Directive, check: ForwardOptions["healthCheck"]): void {
  argCount(opt, NAME, 1, 4);
  check.intervalMs = positive(opt, parseTimerDuration(opt.args[0], NAME));
  for (let i = 1; i < opt.args.length; i++) {
    const a = opt.args[i];
    if (a.text === "no_rec") check.rd = false;
    else if (a.text === "domain" && i + 1 < opt.args.length) check.name = zoneName(opt.args[++i], NAME);
    else throw configError(a, NAME, `health_check: unexpected '${a.text}' (want no_rec or domain FQDN)`);
  }
}

function rcodes(opt: Directive, failover: boolean): Set<number> {
  argCount(opt, NAME, 1, Infinity);
  const out = new Set<number>();
  for (const t of opt.args) {
    const r = rcodeFromName(t.text);
    if (r === undefined)
      throw configError(t, NAME, `'${t.text}' is not an rcode name (e.g. NXDOMAIN, SERVFAIL)`);
    if (failover && r === Rcode.NOERROR) throw configError(t, NAME, "failover cannot be used with NOERROR");
    out.add(r);
  }
  return out;
}
