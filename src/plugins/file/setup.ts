// `file DBFILE [ZONES...] { reload DURATION; upstream [ADDRESS...] }`: serve zones from an RFC 1035
// zone file, as CoreDNS's file plugin (whose `upstream` is a no-op: accepted with a warning). The file
// is loaded here, so a bad zone file stops start-up with the Corefile's file:line.

import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import {
  argCount,
  blockOptions,
  fallthroughZones,
  ignoredOption,
  noBlock,
  parseTimerDuration,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { ZoneReloader, ZoneSet, filePlugin, fileStampSync, fileTransferer, loadZones } from "./file.ts";
import { offerTransferer } from "../transfer/transferer.ts";
import { signerOf } from "../sign/signers.ts";

/** CoreDNS's default: check the file once a minute. */
const DEFAULT_RELOAD_MS = 60_000;

export const setup: Setup = (d, ctx) => {
  argCount(d, "file", 1, Infinity);
  const path = resolve(ctx.root, d.args[0].text);
  const origins = zonesArg(d.args.slice(1), ctx.zones, "file");
  let reloadMs = DEFAULT_RELOAD_MS;
  let fallthrough: string[] | undefined;
  blockOptions(d, "file", {
    reload(opt) {
      argCount(opt, "file", 1, 1);
      noBlock(opt, "file");
      reloadMs = parseTimerDuration(opt.args[0], "file");
    },
    upstream(opt) {
      noBlock(opt, "file");
      ignoredOption(opt, ctx.log("file"), "a no-op in CoreDNS too");
    },
    fallthrough(opt) {
      noBlock(opt, "file");
      fallthrough = fallthroughZones(opt);
    },
    // CoreDNS reloads on a new SOA serial unless this says to go by the file's time; here a changed
    // file is always read again (its inode, size and time), and a reload whose serial did not move says so.
    reload_by_mtime(opt) {
      argCount(opt, "file", 0, 0);
      noBlock(opt, "file");
    },
  });

  // The stamp is taken before reading, so a change made while we read is seen by the first poll.
  const stamp = fileStampSync(path);
  // A reload takes over the zones the running configuration parsed from the file as it is now.
  const key = `file ${path} ${origins.join(" ")} ${stamp}`;
  let zones = ctx.adopt<ZoneSet>(key);
  if (zones === undefined && stamp === "missing" && ctx.block.directives.includes("sign")) {
    // The block's `sign`, set up after `file`, may be what writes this file: it signs and this reads
    // at start-up, after every setup and before the first query.
    const later = (zones = new ZoneSet([]));
    ctx.onStartup(() => {
      signerOf(ctx.block.shared, path)?.();
      try {
        later.replace(loadZones(path, origins));
      } catch (err) {
        throw configError(d, "file", (err as Error).message);
      }
    });
  } else if (zones === undefined) {
    try {
      zones = new ZoneSet(loadZones(path, origins));
    } catch (err) {
      throw configError(d, "file", (err as Error).message);
    }
    ctx.keep(key, zones, () => {});
  }

  if (reloadMs > 0) {
    const reloader = new ZoneReloader(
      {
        path,
        origins,
        intervalMs: reloadMs,
        zones,
        log: ctx.log("file"),
        invalidate: () => ctx.invalidate(),
      },
      stamp,
    );
    ctx.onStartup(() => reloader.start());
    ctx.onShutdown(() => reloader.stop());
  }
  offerTransferer(ctx.block.shared, fileTransferer(zones));
  return filePlugin(zones, { lookup: ctx.lookup, fallthrough });
};
