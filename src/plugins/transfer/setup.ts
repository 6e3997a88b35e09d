// `transfer [ZONES...] { to ADDRESS... }`: zone transfers out of the block's kubernetes and file zones,
// as CoreDNS's transfer plugin. `to` may repeat; at least one is required, as in CoreDNS. The
// addresses `to` names one by one are sent NOTIFY when a zone changes (notifier.ts).

import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, noBlock, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { Notifier } from "./notifier.ts";
import { Secondaries } from "./secondaries.ts";
import { transferPlugin } from "./transfer.ts";
import { transferers } from "./transferer.ts";

const NAME = "transfer";

export const setup: Setup = (d, ctx) => {
  const zones = zonesArg(d.args, ctx.zones, NAME);
  const to = new Secondaries();
  let given = false;
  blockOptions(d, NAME, {
    to(opt) {
      noBlock(opt, NAME);
      argCount(opt, NAME, 1, Infinity);
      for (const t of opt.args) {
        const err = to.add(t.text);
        if (err !== undefined) throw configError(t, NAME, `to: ${err}`);
      }
      given = true;
    },
  });
  if (!given) throw configError(d, NAME, "'to' is required: the addresses that may transfer, or *");
  const log = ctx.log(NAME);
  const sources = () => transferers(ctx.block.shared);
  ctx.onStartup(() => {
    if (sources().length === 0) {
      log.warn({ zones }, "no plugin in this server block holds zones to transfer (kubernetes, file)");
    }
  });
  // The process notifies once: worker threads set the same Corefile up, and send none.
  if (!inWorker() && to.notifyTargets.length > 0) {
    const notifier = new Notifier({ zones, targets: to.notifyTargets, sources, log });
    ctx.onServing(() => notifier.start());
    ctx.onShutdown(() => notifier.stop());
  }
  return transferPlugin({ zones, to, sources, log });
};
