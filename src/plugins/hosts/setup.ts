// hosts [FILE [ZONES...]] {
//     [INLINE...]
//     ttl SECONDS
//     no_reverse
//     reload DURATION
//     fallthrough [ZONES...]
//     fallthrough_unsupported
// }

import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { HostsEntry } from "./hosts-file.ts";
import type { HostsFileData, HostsOptions } from "./hosts.ts";
import { Hosts } from "./hosts.ts";
import { parseHostsLine } from "./hosts-file.ts";
import { argCount, noBlock, parseIntArg, parseTimerDuration, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical } from "../../dns/name.ts";

const DEFAULT_FILE = "/etc/hosts";
const DEFAULT_TTL = 3600;
const DEFAULT_RELOAD_MS = 5000;

export const setup: Setup = async (d, ctx) => {
  const file = d.args[0]?.text ?? DEFAULT_FILE;
  const path = resolve(ctx.root, file);
  const opts: HostsOptions = {
    path,
    zones: zonesArg(d.args.slice(1), ctx.zones, "hosts"),
    ttl: DEFAULT_TTL,
    reverse: true,
    fallthrough: undefined,
    fallthroughUnsupported: false,
    inline: [],
  };
  let reloadMs = DEFAULT_RELOAD_MS;
  for (const opt of d.block ?? []) {
    noBlock(opt, "hosts");
    switch (opt.name) {
      case "ttl":
        argCount(opt, "hosts", 1, 1);
        opts.ttl = parseIntArg(opt.args[0], "hosts", 1, 65535);
        break;
      case "no_reverse":
        argCount(opt, "hosts", 0, 0);
        opts.reverse = false;
        break;
      case "reload":
        argCount(opt, "hosts", 1, 1);
        reloadMs = parseTimerDuration(opt.args[0], "hosts");
        break;
      case "fallthrough":
        opts.fallthrough = fallZones(opt.args);
        break;
      case "fallthrough_unsupported":
        argCount(opt, "hosts", 0, 0);
        opts.fallthroughUnsupported = true;
        break;
      default:
        opts.inline.push(inlineEntry(opt));
    }
  }
  if (opts.fallthroughUnsupported && !opts.fallthrough) {
    throw configError(d, "hosts", "'fallthrough_unsupported' needs 'fallthrough'");
  }
  const log = ctx.log("hosts");
  const hosts = new Hosts(opts, log);
  // The file as last read, kept across reloads: a reload's refresh reads it again only if changed.
  const key = `hosts ${path}`;
  let read = ctx.adopt<{ data?: HostsFileData }>(key);
  if (read?.data) hosts.seed(read.data);
  else if (read === undefined) ctx.keep(key, (read = {}), () => {});
  const kept = read;
  try {
    // A missing file is only a warning (it may appear later); an unreadable one is an error.
    await hosts.refresh();
    kept.data = hosts.fileData;
  } catch (err) {
    throw configError(d, "hosts", `unable to read hosts file '${path}': ${(err as Error).message}`);
  }
  if (reloadMs > 0) {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const tick = async (): Promise<void> => {
      try {
        if (await hosts.refresh()) ctx.invalidate();
        kept.data = hosts.fileData;
      } catch (err) {
        log.error({ err, file: path }, "hosts file could not be reloaded; keeping the previous entries");
      }
      if (!stopped) timer = setTimeout(() => void tick(), reloadMs).unref();
    };
    ctx.onStartup(() => {
      timer = setTimeout(() => void tick(), reloadMs).unref();
    });
    ctx.onShutdown(() => {
      stopped = true;
      clearTimeout(timer);
    });
  }
  return (next) => hosts.handler(next);
};

/** A hosts-file line written in the block: an error here is the Corefile's, so it fails start-up. */
function inlineEntry(opt: Directive): HostsEntry {
  // Option names hold neither dots nor colons; every address does.
  if (!/[.:]/.test(opt.name)) fail(`unknown property '${opt.name}'`);
  const r = parseHostsLine([opt.name, ...opt.args.map((t) => t.text)]);
  if (typeof r === "string") fail(`bad inline hosts line: ${r}`);
  return r;

  function fail(message: string): never {
    throw configError(opt, "hosts", message);
  }
}

/** Zones of `fallthrough`: any name, as in CoreDNS (one outside the plugin's zones never matches). */
function fallZones(tokens: Token[]): string[] {
  return tokens.map((t) => {
    const z = canonical(t.text);
    if (!/^[a-z0-9_.-]+$/.test(z)) throw configError(t, "hosts", `invalid zone '${t.text}'`);
    return z;
  });
}
