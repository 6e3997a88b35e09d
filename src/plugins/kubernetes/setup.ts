// `kubernetes [ZONES...] { ... }`: the plugin put together from its configuration (config.ts): the
// store and the answers over it, the source that fills it (config-source.ts), what it offers the
// block's other plugins (autopath, k8s_external, transfer), the hold until the first sync, readiness,
// the heap's tuning around that sync (heap-tuning.ts) and the metrics.

import type { Logger } from "pino";
import type { ReadyCheck, Setup, SetupContext } from "../../plugin.ts";
import { startError } from "../../corefile/errors.ts";
import { kindsFor, parseConfig, snapshotSettings, type KubernetesConfig } from "./config.ts";
import type { Kind } from "./store/source.ts";
import { configuredSource, type ConfiguredSource } from "./config-source.ts";
import { tuneHeapAroundSync } from "./heap-tuning.ts";
import { Store } from "./store/store.ts";
import { Records } from "./answers/records.ts";
import { kubernetesPlugin } from "./kubernetes.ts";
import { StartupGate } from "./store/startup-gate.ts";
import { localIPs } from "./local-ips.ts";
import { EXTERNALER, externaler } from "./external-offer.ts";
import { offer } from "../offers.ts";
import { observeProgramming, track } from "./metrics.ts";
import { SEARCH_PATHS, clientSearchPaths } from "./answers/search-paths.ts";
import { WarmStart } from "./store/snapshot.ts";
import { kubernetesTransferer } from "./answers/xfr.ts";
import { Multicluster } from "./store/multicluster.ts";
import { offerTransferer } from "../transfer/transferer.ts";

const NAME = "kubernetes";

export const setup: Setup = async (d, ctx) => {
  const c = parseConfig(d, ctx);
  const log = ctx.log(NAME);
  const kinds = kindsFor(c);
  const local = localIPs(process.env, ctx.block.bind);
  const { store, records } = answers(c, kinds, local, ctx);

  let configured: ConfiguredSource;
  try {
    configured = await configuredSource(c, kinds, log, ctx.instance.checkOnly ?? false);
  } catch (err) {
    // The Corefile is right; a file it names (kubeconfig, objects, certificates) is missing or wrong.
    throw startError(d, NAME, (err as Error).message);
  }
  const { source } = configured;

  offer(ctx.block.shared, SEARCH_PATHS, clientSearchPaths(store, records.primary, c.pods));
  offerTransferer(ctx.block.shared, kubernetesTransferer(store, records));

  const warm = c.snapshot && new WarmStart({ ...c.snapshot, settings: snapshotSettings(c), store, log });

  let startedAt: number | undefined;
  const gate = new StartupGate({
    store,
    timeoutMs: c.startupTimeoutMs,
    startedAt: () => startedAt,
    onDeadline: warm ? () => warm.deadline() : undefined,
  });
  offer(ctx.block.shared, EXTERNALER, externaler(store, gate, local));
  let untrack = () => {};
  // Ready once synced and the work after the sync is done: the heap compaction pauses the process
  // (0.13 s at 10k services), which must happen before /ready lets traffic in, not under it.
  let settled = false;
  let onSettled = () => {};
  const whenSettled = new Promise<void>((r) => (onSettled = r));
  const ready: ReadyCheck = () => store.synced && settled;
  if (warm) ready.describe = () => warm.describe();
  ctx.registerReady(NAME, ready);
  ctx.onStartup(async () => {
    startedAt = Date.now();
    if (warm) {
      warm.start();
      setTimeout(() => warm.deadline(), c.startupTimeoutMs).unref();
      ctx.onShutdown(() => warm.stop());
    }
    tuneHeapAroundSync(store, ctx.instance.takesOver, (compactMs) => {
      settled = true;
      onSettled();
      log.info({ source: source.describe(), objects: store.stats().objects, compactMs }, "synced");
    });
    untrack = track(store, configured.apiStats);
    await source.start(store);
  });
  // The DNS sockets open once the store can answer, as CoreDNS starts its servers only then.
  ctx.holdListeners(() =>
    settled ? Promise.resolve() : holdUntilSynced({ gate, store, whenSettled, log, c, source }),
  );
  ctx.onShutdown(() => {
    untrack();
    return source.stop();
  });

  return kubernetesPlugin({
    store,
    records,
    fallthrough: c.fallthrough,
    gate,
    lookup: (name, qtype, depth) => ctx.lookup(name, qtype, depth),
  });
};

/** The wait before the DNS sockets open: the first sync and the compaction after it (whose pause must
 * not fall on queries either), or startup_timeout, from then on serving the snapshot, or SERVFAIL for
 * the cluster's names. */
async function holdUntilSynced(o: {
  gate: StartupGate;
  store: Store;
  whenSettled: Promise<void>;
  log: Logger;
  c: KubernetesConfig;
  source: ConfiguredSource["source"];
}): Promise<void> {
  const timeout = o.c.startupTimeoutMs / 1000;
  o.log.info(
    { source: o.source.describe(), startupTimeout: timeout },
    "waiting for the first sync before listening",
  );
  // The timers behind the wait do not keep the process up, and nothing else may (objects files).
  const alive = setInterval(() => {}, 60_000);
  try {
    if (await o.gate.synced()) await o.whenSettled;
    else {
      const serving =
        o.store.servingFrom === "snapshot" ? "the snapshot" : "SERVFAIL for the cluster's names";
      o.log.warn(
        { startupTimeout: timeout },
        `listening with the Kubernetes API not synced: ${serving} until it is`,
      );
    }
  } finally {
    clearInterval(alive);
  }
}

/** The store of `c` and the answers over it; a change to the store drops the answers it altered from
 * the answer cache. */
function answers(
  c: KubernetesConfig,
  kinds: Kind[],
  local: readonly string[],
  ctx: SetupContext,
): { store: Store; records: Records } {
  const multicluster =
    c.multicluster && new Multicluster(c.multicluster, { endpointPodNames: c.endpointPodNames });
  const store = new Store({
    zones: c.zones,
    waitFor: kinds,
    endpointPodNames: c.endpointPodNames,
    keepPods: c.pods === "verified",
    namespaceSelector: c.namespaceSelector,
    localIPs: local,
    onChange: (names) => (names === "all" ? ctx.invalidate() : ctx.invalidateNames(names)),
    onProgrammed: observeProgramming,
    multicluster,
    names: { ignoreEmptyService: c.ignoreEmptyService, zonal: c.zonal },
  });
  const records = new Records(store, {
    zones: c.zones,
    ttl: c.ttl,
    pods: c.pods,
    localIPs: local,
    multicluster,
  });
  return { store, records };
}
