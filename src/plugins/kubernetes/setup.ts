// `kubernetes [ZONES...] { ... }`: the plugin put together from its configuration (config.ts): the
// live cluster (live-cluster.ts: the source, the store it fills, kept across reloads that leave them
// as they are), the answers over it, what it offers the block's other plugins (autopath,
// k8s_external, transfer), the hold until the first sync, readiness and the metrics.

import { warmUpQuestions } from "./answers/warm-up-questions.ts";
import type { Logger } from "pino";
import type { ReadyCheck } from "../../setup/instance.ts";
import type { Setup } from "../../setup/registry.ts";
import type { SetupContext } from "../../setup/context.ts";
import { startError } from "../../corefile/errors.ts";
import { kindsFor, parseConfig, type KubernetesConfig } from "./config.ts";
import { Records } from "./answers/records.ts";
import { kubernetesPlugin } from "./kubernetes.ts";
import { StartupGate } from "./sync/startup-gate.ts";
import { localIPs } from "./local-ips.ts";
import { EXTERNALER, externaler } from "./external-offer.ts";
import { offer } from "../offers.ts";
import { track } from "./metrics.ts";
import { SEARCH_PATHS, clientSearchPaths } from "./answers/search-paths.ts";
import { kubernetesTransferer } from "./answers/xfr.ts";
import { offerTransferer } from "../transfer/transferer.ts";
import { isReverseZone } from "./names/zones.ts";
import { LiveCluster, liveKey, type CacheDrop } from "./live-cluster.ts";
import { metadataOf } from "../metadata/labels.ts";
import { kubernetesMetadata } from "./metadata.ts";

const NAME = "kubernetes";
/** How often a process waiting beside a serving peer asks again whether the peer still serves. */
const PEER_RECHECK_MS = 1000;

export const setup: Setup = async (d, ctx) => {
  const c = parseConfig(d, ctx);
  const log = ctx.log(NAME);
  if (c.unreached.length > 0) {
    log.warn(
      { zones: c.unreached, block: ctx.zones },
      "zones outside the server block: no query for them reaches this plugin",
    );
  }
  const kinds = kindsFor(c);
  const local = localIPs(process.env, ctx.block.bind);
  const key = liveKey(c, kinds, local, ctx.instance.fileStamps);
  let live = ctx.adopt<LiveCluster>(key);
  if (live === undefined) {
    try {
      live = await LiveCluster.create({
        c,
        kinds,
        local,
        log,
        checkOnly: ctx.instance.checkOnly ?? false,
        key,
      });
    } catch (err) {
      // The Corefile is right; a file it names (kubeconfig, objects, certificates) is missing or wrong.
      throw startError(d, NAME, (err as Error).message);
    }
    const created = live;
    ctx.keep(key, live, () => created.stop());
  } else log.info({ source: live.configured.source.describe() }, "reload: the running store is taken over");
  const { store, configured, warm } = live;
  const records = new Records(store, {
    zones: c.zones,
    ttl: c.ttl,
    pods: c.pods,
    localIPs: local,
    multicluster: live.multicluster,
  });
  // A change to the store drops the answers it altered from this configuration's answer cache.
  const drop: CacheDrop = (names) => (names === "all" ? ctx.invalidate() : ctx.invalidateNames(names));
  live.caches.add(drop);

  const clusterZones = c.zones.filter((z) => !isReverseZone(z) && !live.multicluster?.serves(z));
  offer(ctx.block.shared, SEARCH_PATHS, clientSearchPaths(store, clusterZones, c.pods));
  offerTransferer(ctx.block.shared, kubernetesTransferer(store, records));
  metadataOf(ctx.block.shared)?.provide(kubernetesMetadata(store, c.zones, c.pods));

  const it = live;
  const gate = new StartupGate({
    store,
    timeoutMs: c.startupTimeoutMs,
    startedAt: () => it.startedAt,
    onDeadline: warm ? () => warm.deadline() : undefined,
  });
  offer(ctx.block.shared, EXTERNALER, externaler(store, gate, local));
  let untrack = () => {};
  // Ready once synced and the work after the sync is done: the heap compaction pauses the process
  // (0.13 s at 10k services), which must happen before /ready lets traffic in, not under it.
  const ready: ReadyCheck = () => store.synced && it.settled;
  if (warm) ready.describe = () => warm.describe();
  ctx.registerReady(NAME, ready);
  ctx.onStartup(async () => {
    untrack = track(store, configured.apiStats);
    await it.start(ctx.instance.takesOver);
  });
  // The DNS sockets open once the store can answer, as CoreDNS starts its servers only then.
  ctx.holdListeners(() =>
    it.settled ? Promise.resolve() : holdUntilSynced({ gate, live: it, log, c, ctx }),
  );
  // Part of that work: the answer path run once on the store's questions before the first client's
  // query (src/server/warm-up.ts; once per thread, so a reload's configuration does not run it again).
  const unhook = it.beforeSettle(() => ctx.warmUp(() => warmUpQuestions(store, records)));
  ctx.onShutdown(() => {
    unhook();
    live.caches.delete(drop);
    untrack();
  });

  return kubernetesPlugin({
    store,
    records,
    fallthrough: c.fallthrough,
    gate,
    lookup: (name, qtype, depth, deadline) => ctx.lookup(name, qtype, depth, deadline),
  });
};

/** The wait before the DNS sockets open: the first sync and the compaction after it (whose pause must
 * not fall on queries either), or startup_timeout, from then on serving the snapshot, or SERVFAIL for
 * the cluster's names. With -reuseport, while another process serves the port the wait goes on past
 * startup_timeout: a share of the port's queries is better left with it than answered SERVFAIL. */
async function holdUntilSynced(o: {
  gate: StartupGate;
  live: LiveCluster;
  log: Logger;
  c: KubernetesConfig;
  ctx: SetupContext;
}): Promise<void> {
  const timeout = o.c.startupTimeoutMs / 1000;
  const { store, configured } = o.live;
  o.log.info(
    { source: configured.source.describe(), startupTimeout: timeout },
    "waiting for the first sync before listening",
  );
  // The timers behind the wait do not keep the process up, and nothing else may (objects files).
  const alive = setInterval(() => {}, 60_000);
  try {
    if ((await o.gate.synced()) || (await besidePeer(o))) await o.live.whenSettled;
    else {
      const serving = store.servingFrom === "snapshot" ? "the snapshot" : "SERVFAIL for the cluster's names";
      o.log.warn(
        { startupTimeout: timeout },
        `listening with the Kubernetes API not synced: ${serving} until it is`,
      );
    }
  } finally {
    clearInterval(alive);
  }
}

/** Past startup_timeout, not synced: waits for the sync while another process serves the port
 * (-reuseport), asking again every second. True once synced; false as soon as no peer serves. */
async function besidePeer(o: { live: LiveCluster; log: Logger; c: KubernetesConfig; ctx: SetupContext }) {
  const { store } = o.live;
  if (store.synced) return true;
  const zone = o.c.zones.find((z) => !isReverseZone(z))!;
  let logged = false;
  while (!store.synced) {
    if (!(await o.ctx.peerServes(zone))) return store.synced;
    if (!logged) {
      logged = true;
      o.log.warn(
        { zone, startupTimeout: o.c.startupTimeoutMs / 1000 },
        "not synced at startup_timeout, but another process serves the port: waiting for the sync before listening",
      );
    }
    await Promise.race([store.whenSynced(), new Promise((r) => setTimeout(r, PEER_RECHECK_MS).unref())]);
  }
  return true;
}
