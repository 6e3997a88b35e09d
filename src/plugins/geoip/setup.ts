// geoip DBFILE {
//     edns-subnet
// }
// Publishes the client's location (or network, for an ASN database) from a MaxMind DB file as
// metadata labels (labels.ts) for log, rewrite and view to read. The file is read here, so a missing
// or bad file stops start-up with the Corefile's file:line. No handler: the labels are worked out
// when read. Once per block (the compatibility data's `twice`).

import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { metadataOf } from "../metadata/labels.ts";
import { openDatabase, type GeoDatabase } from "./database.ts";
import { geoipMetadata } from "./labels.ts";

export const setup: Setup = async (d, ctx) => {
  argCount(d, "geoip", 1, 1);
  let ednsSubnet = false;
  blockOptions(d, "geoip", {
    "edns-subnet": (opt) => {
      argCount(opt, "geoip", 0, 0);
      noBlock(opt, "geoip");
      ednsSubnet = true;
    },
  });
  let db: GeoDatabase;
  try {
    db = await openDatabase(resolve(ctx.root, d.args[0].text));
  } catch (err) {
    throw configError(d.args[0], "geoip", (err as Error).message);
  }
  const metadata = metadataOf(ctx.block.shared);
  if (metadata === undefined) {
    ctx
      .log("geoip")
      .warn(
        { at: `${d.file}:${d.line}` },
        "the block has no metadata directive: no plugin can read geoip's labels",
      );
  } else metadata.provide(geoipMetadata(db, { ednsSubnet }));
  return undefined;
};
