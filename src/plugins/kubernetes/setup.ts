// `kubernetes [ZONES...] { ... }`: the options of CoreDNS's kubernetes plugin, plus `objects FILE...`
// to read the cluster from files instead of the API. Every option is checked here, with file:line;
// an option CoreDNS has and clusterdns does not is an error, never ignored.

import { resolve } from "node:path";
import type { ReadyCheck, Setup, SetupContext } from "../../plugin.ts";
import type { Directive } from "../../corefile/types.ts";
import {
  argCount,
  blockOptions,
  fallthroughZones,
  noBlock,
  onceEach,
  parseDuration,
  parseIntArg,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical } from "../../dns/name.ts";
import type { Kind, Source } from "./source.ts";
import type { LabelSelector } from "./label-selector.ts";
import { Store, isReverseZone } from "./store.ts";
import { parseLabelSelector } from "./label-selector.ts";
import type { PodMode } from "./records.ts";
import { Records } from "./records.ts";
import { kubernetesPlugin } from "./kubernetes.ts";
import { StartupGate } from "./startup-gate.ts";
import { localIPs } from "./local-ips.ts";
import { EXTERNAL_OFFER, type ExternalOffer } from "./external-offer.ts";
import { objectsSource } from "./objects-file.ts";
import { observeProgramming, track } from "./metrics.ts";
import { collectGarbage, limitHeapGrowth } from "../../runtime/heap.ts";
import { clientSearchPaths } from "./search-paths.ts";
import { WarmStart, type SnapshotSettings } from "./snapshot.ts";
import type { ApiSource } from "./source-api.ts";
import type { ApiLimits } from "./rate-limit.ts";
import { kubernetesTransferer } from "./xfr.ts";
import { Multicluster } from "./multicluster.ts";
import { offerTransferer } from "../transfer/transferer.ts";

const NAME = "kubernetes";
const DEFAULT_TTL = 5;
/** CoreDNS waits this long for the first sync before serving. */
const DEFAULT_STARTUP_TIMEOUT_MS = 5000;

/** Options CoreDNS knows that clusterdns does not implement: named, so the error says so. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  transfer: "zone transfers are the transfer plugin's (transfer { to ... })",
  resyncperiod: "removed from CoreDNS; there is no periodic resync",
  upstream: "removed from CoreDNS; ExternalName targets resolve through the server itself",
  autopath: "use the autopath plugin",
  federation: "federation is not supported",
};

export interface KubernetesConfig {
  zones: string[];
  endpoint?: string;
  tls?: { cert: string; key: string; ca: string };
  kubeconfig?: string;
  context?: string;
  namespaces: string[];
  labels?: string;
  labelSelector?: LabelSelector;
  namespaceLabels?: string;
  namespaceSelector?: LabelSelector;
  pods: PodMode;
  endpointPodNames: boolean;
  ttl: number;
  noEndpoints: boolean;
  /** Zones an NXDOMAIN falls through in ("." for all); undefined without `fallthrough`. */
  fallthrough?: string[];
  ignoreEmptyService: boolean;
  startupTimeoutMs: number;
  /** Absolute paths of `objects` files: read the cluster from them instead of the API. */
  objects?: string[];
  /** `snapshot FILE [INTERVAL]`: the warm-start file and how often it is written. */
  snapshot?: { file: string; intervalMs: number };
  /** `apiserver_qps`, `apiserver_burst`, `apiserver_max_inflight`: client-side limits on API requests. */
  limits: ApiLimits;
  /** `multicluster [ZONES...]`: the zones answered from ServiceImports (canonical). */
  multicluster?: string[];
}

/** The zone of the Multi-Cluster Services API (KEP-1645): `multicluster` without zones. */
const CLUSTERSET_ZONE = "clusterset.local.";

/** How often a changed store is written to the snapshot by default. */
const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;

/** Parses the directive; throws ConfigError naming file:line. */
export function parseConfig(d: Directive, ctx: Pick<SetupContext, "zones" | "root">): KubernetesConfig {
  const zones = zonesArg(d.args, ctx.zones, NAME);
  if (!zones.some((z) => !isReverseZone(z))) {
    throw configError(
      d,
      NAME,
      "needs a zone that is not a reverse zone (such as cluster.local) for its names",
    );
  }
  const c: KubernetesConfig = {
    zones,
    namespaces: [],
    pods: "disabled",
    endpointPodNames: false,
    ttl: DEFAULT_TTL,
    noEndpoints: false,
    ignoreEmptyService: false,
    startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
    limits: {},
  };
  const once = onceEach(NAME);
  const selector = (opt: Directive): [string, LabelSelector] => {
    argCount(opt, NAME, 1, Infinity);
    const text = opt.args.map((t) => t.text).join(" ");
    try {
      return [text, parseLabelSelector(text)];
    } catch (err) {
      throw configError(opt, NAME, `${opt.name}: ${(err as Error).message}`);
    }
  };
  const path = (t: { text: string }) => resolve(ctx.root, t.text);
  const unsupported = Object.fromEntries(
    Object.entries(UNSUPPORTED).map(([name, why]) => [
      name,
      (opt: Directive) => {
        throw configError(opt, NAME, `'${name}' is not supported: ${why}`);
      },
    ]),
  );

  blockOptions(d, NAME, {
    ...unsupported,
    endpoint(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const url = opt.args[0].text;
      if (!/^https?:\/\/[^/\s]+/.test(url)) {
        throw configError(opt, NAME, `endpoint '${url}' is not an http(s) URL`);
      }
      c.endpoint = url;
    },
    tls(opt) {
      once(opt);
      argCount(opt, NAME, 3, 3);
      const [cert, key, ca] = opt.args.map(path);
      c.tls = { cert, key, ca };
    },
    kubeconfig(opt) {
      once(opt);
      argCount(opt, NAME, 1, 2);
      c.kubeconfig = path(opt.args[0]);
      c.context = opt.args[1]?.text;
    },
    namespaces(opt) {
      noBlock(opt, NAME);
      argCount(opt, NAME, 1, Infinity);
      c.namespaces.push(...opt.args.map((t) => t.text.toLowerCase()));
    },
    labels(opt) {
      once(opt);
      [c.labels, c.labelSelector] = selector(opt);
    },
    namespace_labels(opt) {
      once(opt);
      [c.namespaceLabels, c.namespaceSelector] = selector(opt);
    },
    pods(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const mode = opt.args[0].text;
      if (mode !== "disabled" && mode !== "insecure" && mode !== "verified") {
        throw configError(opt, NAME, `pods: unknown mode '${mode}' (want disabled, insecure or verified)`);
      }
      c.pods = mode;
    },
    endpoint_pod_names(opt) {
      once(opt);
      argCount(opt, NAME, 0, 0);
      c.endpointPodNames = true;
    },
    ttl(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.ttl = parseIntArg(opt.args[0], NAME, 0, 3600);
    },
    noendpoints(opt) {
      once(opt);
      argCount(opt, NAME, 0, 0);
      c.noEndpoints = true;
    },
    fallthrough(opt) {
      once(opt);
      c.fallthrough = fallthroughZones(opt);
    },
    ignore(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      if (opt.args[0].text !== "empty_service") {
        throw configError(opt, NAME, `ignore: unknown value '${opt.args[0].text}' (want empty_service)`);
      }
      c.ignoreEmptyService = true;
    },
    startup_timeout(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.startupTimeoutMs = parseDuration(opt.args[0], NAME);
    },
    objects(opt) {
      once(opt);
      argCount(opt, NAME, 1, Infinity);
      c.objects = opt.args.map(path);
    },
    apiserver_qps(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const qps = Number(opt.args[0].text);
      if (!/^\d+(\.\d+)?$/.test(opt.args[0].text) || !(qps > 0)) {
        throw configError(opt.args[0], NAME, `apiserver_qps: '${opt.args[0].text}' is not a number above 0`);
      }
      c.limits.qps = qps;
    },
    apiserver_burst(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.limits.burst = parseIntArg(opt.args[0], NAME, 1, 1_000_000);
    },
    apiserver_max_inflight(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.limits.maxInflight = parseIntArg(opt.args[0], NAME, 1, 1_000_000);
    },
    multicluster(opt) {
      once(opt);
      const zones = opt.args.length === 0 ? [CLUSTERSET_ZONE] : opt.args.map((t) => canonical(t.text));
      for (const z of zones) {
        // CoreDNS: the plugin must be authoritative for them, so they are among its zones.
        if (!c.zones.includes(z) || isReverseZone(z)) {
          throw configError(
            opt,
            NAME,
            `multicluster: '${z}' is not one of the plugin's zones (${c.zones.join(" ")})`,
          );
        }
      }
      if (!c.zones.some((z) => !isReverseZone(z) && !zones.includes(z))) {
        throw configError(opt, NAME, "multicluster: the plugin needs a zone for its own cluster besides");
      }
      c.multicluster = zones;
    },
    snapshot(opt) {
      once(opt);
      argCount(opt, NAME, 1, 2);
      const intervalMs = opt.args[1] ? parseDuration(opt.args[1], NAME) : DEFAULT_SNAPSHOT_INTERVAL_MS;
      if (intervalMs < 1000)
        throw configError(opt.args[1], NAME, "snapshot: the interval must be at least 1s");
      c.snapshot = { file: path(opt.args[0]), intervalMs };
    },
  });

  if (c.kubeconfig !== undefined && c.endpoint !== undefined) {
    throw configError(d, NAME, "'kubeconfig' and 'endpoint' name the API two ways: use one");
  }
  if (c.multicluster && c.snapshot) {
    throw configError(d, NAME, "'snapshot' does not keep multi-cluster services yet: use one or the other");
  }
  if (c.objects && c.snapshot) {
    throw configError(d, NAME, "'snapshot' keeps what the API said; 'objects' reads files already");
  }
  if (c.objects && Object.keys(c.limits).length > 0) {
    throw configError(d, NAME, "'apiserver_*' limit requests to the API; 'objects' reads files");
  }
  if (c.objects && (c.endpoint !== undefined || c.kubeconfig !== undefined || c.tls)) {
    throw configError(
      d,
      NAME,
      "'objects' reads the cluster from files: it takes no endpoint, tls or kubeconfig",
    );
  }
  return c;
}

function snapshotSettings(c: KubernetesConfig): SnapshotSettings {
  return {
    zones: c.zones,
    namespaces: c.namespaces,
    labels: c.labels,
    namespaceLabels: c.namespaceLabels,
    pods: c.pods,
    endpointPodNames: c.endpointPodNames,
  };
}

/** The kinds to read: services always; endpoint slices unless `noendpoints`; namespaces (to tell an
 * existing namespace from none); pods only for `pods verified`. */
export function kindsFor(c: KubernetesConfig): Kind[] {
  const kinds: Kind[] = ["services", "namespaces"];
  if (!c.noEndpoints) kinds.push("endpointslices");
  if (c.pods === "verified") kinds.push("pods");
  if (c.multicluster) kinds.push("serviceimports");
  return kinds;
}

export const setup: Setup = async (d, ctx) => {
  const c = parseConfig(d, ctx);
  const log = ctx.log(NAME);
  const kinds = kindsFor(c);
  const local = localIPs(process.env, ctx.block.bind);
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
  });
  const records = new Records(store, {
    zones: c.zones,
    ttl: c.ttl,
    pods: c.pods,
    ignoreEmptyService: c.ignoreEmptyService,
    localIPs: local,
    multicluster,
  });

  let source: Source;
  try {
    if (c.objects) {
      // A dump may hold both EndpointSlices and Endpoints: the store prefers the slices.
      const fileKinds: Kind[] = c.noEndpoints ? kinds : [...kinds, "endpoints"];
      source = objectsSource({
        files: c.objects,
        kinds: fileKinds,
        namespaces: c.namespaces,
        labelSelector: c.labelSelector,
      });
    } else {
      if (c.tls && c.endpoint === undefined) log.warn("tls is ignored without endpoint, as in CoreDNS");
      // Loaded only here, so that reading objects from files never loads the API client.
      const { apiSource } = await import("./source-api.ts");
      source = apiSource({
        kubeconfig: c.kubeconfig,
        context: c.context,
        endpoint: c.endpoint,
        tls: c.endpoint !== undefined ? c.tls : undefined,
        kinds,
        labelSelector: c.labels,
        namespaces: c.namespaces.length > 0 ? c.namespaces : undefined,
        limits: c.limits,
        log,
      });
    }
  } catch (err) {
    throw configError(d, NAME, (err as Error).message);
  }

  ctx.block.shared.set(NAME, clientSearchPaths(store, records.primary, c.pods));
  offerTransferer(ctx.block.shared, kubernetesTransferer(store, records));

  const warm = c.snapshot && new WarmStart({ ...c.snapshot, settings: snapshotSettings(c), store, log });

  let startedAt: number | undefined;
  const gate = new StartupGate({
    store,
    timeoutMs: c.startupTimeoutMs,
    startedAt: () => startedAt,
    onDeadline: warm ? () => warm.deadline() : undefined,
  });
  const offer: ExternalOffer = { store, gate, localIPs: local };
  ctx.block.shared.set(EXTERNAL_OFFER, offer);
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
    void store.whenSynced().then(() => {
      // Give back the heap the first LIST's pages took (see src/runtime/heap.ts), once the sync's tick
      // has let go of the last page. Not in a reload's new instance: the old one is answering queries,
      // and the collection would stop them all (0.13 s at 10k services, 0.57 s at 100k).
      setTimeout(() => {
        let compactMs: number | undefined;
        if (!ctx.instance.takesOver) {
          const t0 = performance.now();
          collectGarbage();
          compactMs = Math.round(performance.now() - t0);
        }
        limitHeapGrowth("serving");
        settled = true;
        onSettled();
        log.info({ source: source.describe(), objects: store.stats().objects, compactMs }, "synced");
      }, 100).unref();
    });
    const api = "stats" in source ? (source as ApiSource).stats.bind(source) : undefined;
    untrack = track(store, api);
    if (!store.synced) limitHeapGrowth("list");
    await source.start(store);
  });
  // The DNS sockets open once the store can answer, as CoreDNS starts its servers only then: at the
  // first sync and the compaction after it (whose pause must not fall on queries either), or at
  // startup_timeout, from then on serving the snapshot, or SERVFAIL for the cluster's names.
  ctx.holdListeners(async () => {
    if (settled) return;
    const timeout = c.startupTimeoutMs / 1000;
    log.info(
      { source: source.describe(), startupTimeout: timeout },
      "waiting for the first sync before listening",
    );
    // The timers behind the wait do not keep the process up, and nothing else may (objects files).
    const alive = setInterval(() => {}, 60_000);
    try {
      if (await gate.synced()) await whenSettled;
      else {
        const serving =
          store.servingFrom === "snapshot" ? "the snapshot" : "SERVFAIL for the cluster's names";
        log.warn(
          { startupTimeout: timeout },
          `listening with the Kubernetes API not synced: ${serving} until it is`,
        );
      }
    } finally {
      clearInterval(alive);
    }
  });
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
