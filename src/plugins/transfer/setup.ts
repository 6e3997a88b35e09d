// `transfer [ZONES...] { to ADDRESS... [key NAME] }`: zone transfers out of the block's kubernetes and
// file zones, as CoreDNS's transfer plugin. `to` may repeat; at least one is required, as in CoreDNS.
// The addresses `to` names one by one are sent NOTIFY when a zone changes (notifier.ts), signed with
// the line's key when it ends in `key NAME` (one of the block's tsig secrets; CoreDNS has no such word).

import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, noBlock, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import { canonical } from "../../dns/name.ts";
import { tsigSigner } from "../../client/tsig-signer.ts";
import type { SetupContext } from "../../setup/context.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { Notifier } from "./notifier.ts";
import { Secondaries, type NotifyKey } from "./secondaries.ts";
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
      const { addresses, key } = toLine(opt, ctx);
      for (const t of addresses) {
        const err = to.add(t.text, key);
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

/** A `to` line's addresses, and the key that signs their NOTIFYs when the line ends in `key NAME`: one
 * of the block's tsig secrets, as hmac-sha256 (the algorithm *secondary* signs its queries with). */
function toLine(opt: Directive, ctx: SetupContext): { addresses: readonly Token[]; key?: NotifyKey } {
  const at = opt.args.findIndex((t) => t.text.toLowerCase() === "key");
  if (at < 0) return { addresses: opt.args };
  if (at !== opt.args.length - 2 || at === 0)
    throw configError(opt.args[at], NAME, "to: 'key NAME' comes once, after the addresses");
  const name = canonical(opt.args[at + 1].text);
  const secret = ctx.block.tsig?.secrets.get(name);
  if (secret === undefined)
    throw configError(opt.args[at + 1], NAME, `to: key '${name}' is no secret of this block's tsig`);
  const addresses = opt.args.slice(0, at);
  if (!addresses.some((t) => t.text !== "*" && !t.text.includes("/")))
    throw configError(
      opt.args[at],
      NAME,
      "to: the key signs NOTIFY, and this line names no address to notify",
    );
  return { addresses, key: { name, signer: tsigSigner({ name, algorithm: "hmac-sha256.", secret }) } };
}
