// nodelocal [INTERFACE] {
//     rules auto|nftables|iptables|iptables-legacy|iptables-nft|off
//     check DURATION
//     handover DURATION
//     keep
// }

import { isIP, isIPv6 } from "node:net";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, onceEach, parseTimerDuration } from "../../corefile/args.ts";
import { configError, startError } from "../../corefile/errors.ts";
import type { Directive } from "../../corefile/types.ts";
import { NodeLocal, type NodeConfig } from "./node.ts";
import type { Firewall } from "./detect.ts";
import { inWorker } from "../../runtime/thread-role.ts";

export const DEFAULT_INTERFACE = "nodelocaldns";
const RULES = new Set(["auto", "nftables", "iptables", "iptables-legacy", "iptables-nft", "off"]);

/** A node set-up and how many running instances use it; `replaced`: the one it took over from. */
interface Live {
  node: NodeLocal;
  key: string;
  users: number;
  replaced?: Live;
}

/** The node set-up of this process: a reload's new instance takes it over from the old one, and only
 * the last one out tears the node down. */
let live: Live | undefined;
/** The instance whose blocks already have a nodelocal directive: one per configuration. */
const claimed = new WeakMap<object, Directive>();

export const setup: Setup = (d, ctx) => {
  argCount(d, "nodelocal", 0, 1);
  const first = claimed.get(ctx.instance);
  if (first) {
    throw configError(
      d,
      "nodelocal",
      `given twice (first at ${first.file}:${first.line}): the node is set up once, in the block that binds the node-local addresses`,
    );
  }
  claimed.set(ctx.instance, d);
  const config = parseNodeLocal(d, ctx.block.bind);
  // The node is set up once, by the main thread; a worker thread (-workers N) only answers.
  if (inWorker()) return undefined;
  const log = ctx.log("nodelocal");
  const key = JSON.stringify(config);
  let node: NodeLocal | undefined;
  let mine: Live | undefined;
  const fail = (err: unknown) => startError(d, "nodelocal", (err as Error).message);
  ctx.onStartup(async () => {
    const before = live;
    if (before?.key === key) {
      node = before.node;
      before.users++;
      mine = before;
      return;
    }
    node = new NodeLocal(config, { log, reusePort: ctx.instance.reusePort ?? false });
    try {
      await node.setUpInterface(ctx.block.port ?? 53);
      // A reload that changed nodelocal keeps its listeners (no listening hook runs): the rules follow
      // the new addresses on the port the old set-up served.
      if (before && before.node.port !== 0) await node.setUpRules(before.node.port);
    } catch (err) {
      throw fail(err);
    }
    before?.node.stopChecks();
    // Reloads come one at a time: the set-up `before` replaced has no instance left by now.
    if (before) before.replaced = undefined;
    live = mine = { node, key, users: 1, replaced: before };
  });
  ctx.onListening(async (at) => {
    try {
      await node?.setUpRules(at.port);
    } catch (err) {
      throw fail(err);
    }
  });
  ctx.onStopping(async () => node?.awaitSuccessor());
  ctx.onShutdown(async () => {
    if (!mine || --mine.users > 0 || live !== mine) return;
    // A reload that failed after this set-up took over: the running instance serves on, so the node
    // goes back to its set-up rather than being torn down under it.
    const back = mine.replaced;
    if (back && back.users > 0) {
      live = back;
      await back.node.resume();
      return;
    }
    live = undefined;
    await mine.node.tearDown();
  });
  return undefined;
};

/** An IPv6 address as ip, iptables-save and nft print it (compressed, lowercase): the set-up compares
 * its addresses with what they list, so FD00:0:0::A would never be found there. */
function canonicalAddress(address: string): string {
  return isIPv6(address) ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
}

/** The node set-up a `nodelocal` directive asks for: its interface, the block's bind addresses and
 * its options. */
function parseNodeLocal(d: Directive, bind: readonly string[]): NodeConfig {
  const name = d.args[0]?.text ?? DEFAULT_INTERFACE;
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(name)) {
    throw configError(
      d.args[0],
      "nodelocal",
      `'${name}' is not an interface name (at most 15 letters, digits, '.', '-', '_')`,
    );
  }
  const addresses = [...bind];
  if (addresses.length === 0) {
    throw configError(
      d,
      "nodelocal",
      "the block has no bind: name the node-local addresses there (bind 169.254.20.10)",
    );
  }
  for (const a of addresses) {
    if (isIP(a.split("%")[0]) === 0 || a.includes("%") || a === "0.0.0.0" || a === "::") {
      throw configError(d, "nodelocal", `bind ${a}: the node-local addresses must be plain IP addresses`);
    }
  }
  const config: NodeConfig = {
    interface: name,
    addresses: addresses.map(canonicalAddress),
    rules: "auto",
    checkMs: 60_000,
    handoverMs: 0,
    keep: false,
  };
  const once = onceEach("nodelocal");
  blockOptions(d, "nodelocal", {
    rules: (opt) => {
      once(opt);
      argCount(opt, "nodelocal", 1, 1);
      const v = opt.args[0].text;
      if (!RULES.has(v))
        throw configError(opt.args[0], "nodelocal", `rules '${v}': want one of ${[...RULES].join(", ")}`);
      config.rules = v as Firewall | "auto" | "off";
    },
    check: (opt) => {
      once(opt);
      argCount(opt, "nodelocal", 1, 1);
      config.checkMs = parseTimerDuration(opt.args[0], "nodelocal");
    },
    handover: (opt) => {
      once(opt);
      argCount(opt, "nodelocal", 1, 1);
      config.handoverMs = parseTimerDuration(opt.args[0], "nodelocal");
    },
    keep: (opt) => {
      once(opt);
      argCount(opt, "nodelocal", 0, 0);
      config.keep = true;
    },
  });
  return config;
}
