// metadata [ZONES...]
// Turns request metadata on for the block: its plugins publish labels (kubernetes, view) that log,
// rewrite and view read, for names in ZONES (the block's zones without them). Once per block (the
// compatibility data's `twice`).

import type { Setup } from "../../setup/registry.ts";
import { offer } from "../offers.ts";
import { noBlock, zonesArg } from "../../corefile/args.ts";
import { METADATA } from "./labels.ts";
import { Collector } from "./collector.ts";

export const setup: Setup = (d, ctx) => {
  noBlock(d, "metadata");
  const collector = new Collector(zonesArg(d.args, ctx.zones, "metadata"));
  offer(ctx.block.shared, METADATA, collector);
  ctx.onStartup(() => collector.seal());
  return undefined;
};
