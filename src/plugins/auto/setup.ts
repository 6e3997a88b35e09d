// `auto [ZONES...] { directory DIR [REGEXP ORIGIN_TEMPLATE]; reload DURATION; upstream }`: a zone for
// every file of a folder whose name matches REGEXP (default `db\.(.*)`, origin `{1}`), as CoreDNS's
// auto plugin; the folder is read again every `reload` (default 1m, 0: never). `upstream` is a no-op
// in CoreDNS too: accepted with a warning.

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import {
  argCount,
  blockOptions,
  ignoredOption,
  noBlock,
  onceEach,
  parseTimerDuration,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { fileTransferer } from "../file/file.ts";
import { offerTransferer } from "../transfer/transferer.ts";
import { ZoneFolder } from "./folder.ts";
import { autoPlugin } from "./auto.ts";

const NAME = "auto";
const DEFAULT_RELOAD_MS = 60_000;
/** CoreDNS's bound on the regexp's length. */
const MAX_REGEXP = 10_000;

export const setup: Setup = (d, ctx) => {
  const zones = zonesArg(d.args, ctx.zones, NAME);
  let dir: string | undefined;
  let pattern = /db\.(.*)/;
  let template = "{1}";
  let reloadMs = DEFAULT_RELOAD_MS;
  const once = onceEach(NAME);
  blockOptions(d, NAME, {
    directory(opt) {
      once(opt);
      if (opt.args.length !== 1 && opt.args.length !== 3) {
        throw configError(
          opt,
          NAME,
          `'directory' takes DIR or DIR REGEXP ORIGIN_TEMPLATE, got ${opt.args.length} argument(s)`,
        );
      }
      dir = resolve(ctx.root, opt.args[0].text);
      if (opt.args.length === 3) {
        const re = opt.args[1];
        if (re.text.length > MAX_REGEXP)
          throw configError(re, NAME, `the regexp is longer than ${MAX_REGEXP} characters`);
        try {
          pattern = new RegExp(re.text);
        } catch (err) {
          throw configError(re, NAME, `'${re.text}' is not a regexp: ${(err as Error).message}`);
        }
        template = opt.args[2].text;
      }
    },
    reload(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      reloadMs = parseTimerDuration(opt.args[0], NAME);
    },
    upstream(opt) {
      noBlock(opt, NAME);
      ignoredOption(opt, ctx.log(NAME), "a no-op in CoreDNS too");
    },
  });
  if (dir === undefined) throw configError(d, NAME, "'directory DIR' is required");
  const log = ctx.log(NAME);
  if (!existsSync(dir))
    log.warn(
      { at: `${d.file}:${d.line}`, dir },
      "the zone folder does not exist (yet): no zones until it does",
    );

  const folder = new ZoneFolder({ dir, pattern, template, zones, log });
  folder.scan();
  if (reloadMs > 0) {
    let timer: NodeJS.Timeout | undefined;
    ctx.onStartup(() => {
      timer = setInterval(() => {
        if (folder.scan()) ctx.invalidate();
      }, reloadMs);
      timer.unref();
    });
    ctx.onShutdown(() => clearInterval(timer));
  }
  offerTransferer(ctx.block.shared, fileTransferer(folder.set));
  return autoPlugin(folder.set, ctx.lookup);
};
