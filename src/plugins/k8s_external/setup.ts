// `k8s_external [ZONES...] { apex APEX; ttl TTL; headless; fallthrough [ZONES...] }`, after CoreDNS's
// k8s_external: publishes Services' external addresses under ZONES from the kubernetes plugin of the
// same server block, which must be there.

import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, onceEach, zonesArg } from "../../corefile/args.ts";
import { ttlAndFallthrough } from "../kubernetes/config.ts";
import type { Directive } from "../../corefile/types.ts";
import { configError } from "../../corefile/errors.ts";
import { NS_NAME } from "../kubernetes/store/store.ts";
import { isReverseZone } from "../kubernetes/names/zones.ts";
import { EXTERNALER } from "../kubernetes/external-offer.ts";
import { offered } from "../offers.ts";
import { inOneRead, type StoreAnswers } from "../kubernetes/answers/decision.ts";
import { ExternalRecords } from "./records.ts";
import { k8sExternal } from "./external.ts";

const NAME = "k8s_external";
const DEFAULT_APEX = "dns";
const DEFAULT_TTL = 5;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export interface ExternalConfig {
  zones: string[];
  apex: string;
  ttl: number;
  headless: boolean;
  fallthrough?: string[];
}

/** Parses the directive; throws ConfigError naming file:line. */
export function parseConfig(d: Directive, blockZones: readonly string[]): ExternalConfig {
  const zones = zonesArg(d.args, blockZones, NAME);
  if (!zones.some((z) => !isReverseZone(z))) {
    throw configError(d, NAME, "needs a zone that is not a reverse zone for its names");
  }
  const c: ExternalConfig = { zones, apex: DEFAULT_APEX, ttl: DEFAULT_TTL, headless: false };
  const once = onceEach(NAME);
  blockOptions(d, NAME, {
    apex(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const apex = opt.args[0].text.toLowerCase();
      if (!LABEL.test(apex))
        throw configError(opt.args[0], NAME, `apex '${opt.args[0].text}' is not one DNS label`);
      c.apex = apex;
    },
    headless(opt) {
      once(opt);
      argCount(opt, NAME, 0, 0);
      c.headless = true;
    },
    ...ttlAndFallthrough(NAME, once, c),
  });
  return c;
}

export const setup: Setup = (d, ctx) => {
  const c = parseConfig(d, ctx.zones);
  if (!ctx.block.directives.includes("kubernetes")) {
    throw configError(d, NAME, "needs the kubernetes plugin in this server block: it reads its store");
  }
  let answers: StoreAnswers | undefined;
  // The kubernetes plugin is set up after this one (chain order): its store is there at start-up,
  // before its source starts, so the view is in place for the first sync.
  ctx.onStartup(() => {
    const cluster = offered(ctx.block.shared, EXTERNALER);
    if (cluster === undefined)
      throw configError(d, NAME, "the kubernetes plugin of this block offers no store");
    const records = new ExternalRecords(cluster, c);
    const nameServer = `ns1.${c.apex}`;
    cluster.addView({
      zones: c.zones.filter((z) => !isReverseZone(z)),
      apexes: c.zones,
      // SERVICE.NS.svc -> SERVICE.NS (and the SRV and endpoint names below it); the name server's.
      map: (r) => (r === NS_NAME ? nameServer : r.endsWith(".svc") ? r.slice(0, -4) : undefined),
    });
    answers = {
      name: NAME,
      gate: cluster.gate,
      fallthrough: c.fallthrough,
      refusesOthers: false,
      zoneOf: (qname) => records.zoneOf(qname),
      soa: (zone) => records.soa(zone),
      answer: inOneRead(cluster.read, (zone, qname, qtype, spelled) =>
        records.answer(zone, qname, qtype, spelled),
      ),
      lookup: ctx.lookup,
    };
  });
  return k8sExternal({ answers: () => answers });
};
