// bufsize [SIZE]: the largest UDP reply of the server block, whatever a client's EDNS record offers.
// A setting of the block, not a handler: the pipeline fits every UDP reply of the block to it and
// keeps no longer reply in its answer cache (which it would replay over UDP as it is).

import type { Setup } from "../../setup/registry.ts";
import { argCount, noBlock, parseIntArg } from "../../corefile/args.ts";
import { EDNS_UDP_SIZE } from "../../dns/constants.ts";

/** CoreDNS's range and default (DNS flag day 2020's 1232). */
const MIN_SIZE = 512;
const MAX_SIZE = 4096;

export const setup: Setup = (d, ctx) => {
  argCount(d, "bufsize", 0, 1);
  noBlock(d, "bufsize");
  const size = d.args.length === 0 ? EDNS_UDP_SIZE : parseIntArg(d.args[0], "bufsize", MIN_SIZE, MAX_SIZE);
  if (size >= EDNS_UDP_SIZE) {
    ctx
      .log("bufsize")
      .info({ at: `${d.file}:${d.line}`, size }, `UDP replies are at most ${EDNS_UDP_SIZE} octets already`);
    return undefined;
  }
  ctx.block.udpSize = Math.min(size, ctx.block.udpSize ?? size);
  return undefined;
};
