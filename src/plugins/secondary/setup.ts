// `secondary [ZONES...] { transfer from ADDRESS...; upstream }`: zones transferred from primaries, as
// CoreDNS's secondary plugin (whose `upstream` is a no-op: accepted with a warning). `transfer from`
// takes an address, address:port, [v6]:port or a resolv.conf-style file, and may repeat; the zones
// are transferred after start-up, so a primary that is down does not stop the server.

import { createHash } from "node:crypto";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, ignoredOption, noBlock, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { parseTo } from "../forward/upstream-address.ts";
import { offerTransferer } from "../transfer/transferer.ts";
import type { Primary } from "./primary.ts";
import { SecondaryZone } from "./secondary-zone.ts";
import { secondaryPlugin, secondaryTransferer } from "./secondary.ts";
import { tsigSigner } from "../../client/tsig-signer.ts";

const NAME = "secondary";

export const setup: Setup = (d, ctx) => {
  const origins = zonesArg(d.args, ctx.zones, NAME);
  const primaries: Primary[] = [];
  blockOptions(d, NAME, {
    transfer(opt) {
      noBlock(opt, NAME);
      argCount(opt, NAME, 2, Infinity);
      if (opt.args[0].text !== "from") {
        throw configError(
          opt.args[0],
          NAME,
          `'transfer ${opt.args[0].text}': only 'transfer from ADDRESS...' is taken here; outgoing transfers are the transfer plugin's`,
        );
      }
      for (const t of opt.args.slice(1)) {
        for (const a of parseTo(t, ctx.root, NAME)) {
          if (a.tls) throw configError(t, NAME, `'${t.text}': zone transfers over TLS are not supported`);
          primaries.push({ host: a.host, port: a.port, to: a.to });
        }
      }
    },
    upstream(opt) {
      noBlock(opt, NAME);
      ignoredOption(opt, ctx.log(NAME), "a no-op in CoreDNS too");
    },
  });
  // CoreDNS takes a secondary without primaries and never serves its zones; that is a mistake here.
  if (primaries.length === 0)
    throw configError(d, NAME, "'transfer from ADDRESS...' is required: the primaries");

  const log = ctx.log(NAME);
  // With tsig in the block, what is sent to the primaries is signed with its first key (hmac-sha256):
  // CoreDNS's secondary signs nothing.
  const first = ctx.block.tsig?.secrets.entries().next().value;
  const signer = first && tsigSigner({ name: first[0], algorithm: "hmac-sha256.", secret: first[1] });
  if (first) log.info({ key: first[0], zones: origins }, "transfers and SOA queries are signed with TSIG");
  // A reload takes over the zones the running configuration holds, timers and all.
  const key = `secondary ${origins.join(" ")} from ${primaries.map((p) => p.to).join(" ")} key ${first ? `${first[0]}:${createHash("sha256").update(first[1]).digest("hex")}` : ""}`;
  let zones = ctx.adopt<SecondaryZone[]>(key);
  if (zones === undefined) {
    zones = origins.map((origin) => new SecondaryZone({ origin, primaries, log, signer }));
    const own = zones;
    ctx.keep(key, own, () => own.forEach((z) => z.stop()));
  }
  for (const z of zones) z.onChange = () => ctx.invalidate();
  const sorted = [...zones].sort((a, b) => b.origin.length - a.origin.length);
  ctx.onStartup(() => sorted.forEach((z) => z.start()));
  ctx.block.notify = true;
  offerTransferer(ctx.block.shared, secondaryTransferer(sorted));
  return secondaryPlugin({
    zones: sorted,
    primaries: new Set(primaries.map((p) => p.host)),
    log,
    lookup: ctx.lookup,
  });
};
