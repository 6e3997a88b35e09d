// `kubernetes [ZONES...] { ... }` read into a KubernetesConfig: the options of CoreDNS's kubernetes
// plugin, plus `objects FILE...` to read the cluster from files instead of the API. Every option is
// checked here, with file:line; an option CoreDNS has and clusterdns does not is an error, never
// ignored.

import { resolve } from "node:path";
import type { SetupContext } from "../../setup/context.ts";
import type { Directive } from "../../corefile/types.ts";
import {
  argCount,
  blockOptions,
  fallthroughZones,
  noBlock,
  onceEach,
  parseIntArg,
  parseTimerDuration,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical, isSubdomain } from "../../dns/name.ts";
import { pluginCompat } from "../../compat/coredns.ts";
import type { Kind } from "./model/source.ts";
import { parseLabelSelector, type LabelSelector } from "./model/label-selector.ts";
import { isReverseZone } from "./names/zones.ts";
import type { PodMode } from "./answers/records.ts";
import type { SnapshotSettings } from "./store/snapshot.ts";
import type { ApiLimits } from "./api/rate-limit.ts";

const NAME = "kubernetes";
const DEFAULT_TTL = 5;
/** The largest `ttl`, in kubernetes and k8s_external alike (CoreDNS's). */
const MAX_TTL = 3600;
/** CoreDNS waits this long for the first sync before serving. */
const DEFAULT_STARTUP_TIMEOUT_MS = 5000;
/** The zone of the Multi-Cluster Services API (KEP-1645): `multicluster` without zones. */
const CLUSTERSET_ZONE = "clusterset.local.";
/** How often a changed store is written to the snapshot by default. */
const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;

/** What the compatibility data says of an option CoreDNS removed (when, and what to write instead). */
const removed = (option: string) =>
  pluginCompat(NAME)?.parts?.find((p) => p.option === option)?.note ?? "removed from CoreDNS";

/** Options CoreDNS knows, or knew, that clusterdns does not implement: named, so the error says so. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  transfer: "zone transfers are the transfer plugin's (transfer { to ... })",
  resyncperiod: removed("resyncperiod"),
  upstream: removed("upstream"),
  autopath: "use the autopath plugin",
  federation: removed("federation"),
};

export interface KubernetesConfig {
  zones: string[];
  /** Zones outside the server block but the first forward one (the PTR targets'): no query reaches them. */
  unreached: string[];
  endpoint?: string;
  /** `endpoint`'s URLs after the first: accepted, with a warning, and not used (as in CoreDNS). */
  unusedEndpoints?: string[];
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
  /** `zonal`: headless services' zonal names (CoreDNS PR 8388). */
  zonal?: true;
}

type Handlers = Record<string, (opt: Directive) => void>;
type Once = (opt: Directive) => void;

/** Parses the directive; throws ConfigError naming file:line. */
export function parseConfig(d: Directive, ctx: Pick<SetupContext, "zones" | "root">): KubernetesConfig {
  // CoreDNS takes zones outside the block: a reverse block's PTRs name a forward zone served elsewhere.
  const zones = zonesArg(d.args, ctx.zones, NAME, true);
  if (!zones.some((z) => !isReverseZone(z))) {
    throw configError(
      d,
      NAME,
      "needs a zone that is not a reverse zone (such as cluster.local) for its names",
    );
  }
  const primary = zones.find((z) => !isReverseZone(z));
  const c: KubernetesConfig = {
    zones,
    unreached: zones.filter((z) => z !== primary && !ctx.zones.some((b) => isSubdomain(z, b))),
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
  const path = (t: { text: string }) => resolve(ctx.root, t.text);
  blockOptions(d, NAME, {
    ...unsupported(),
    ...connectionOptions(c, once, path),
    ...scopeOptions(c, once),
    ...answerOptions(c, once),
    ...ttlAndFallthrough(NAME, once, c),
    ...sourceOptions(c, once, path),
  });
  checkTogether(d, c);
  return c;
}

/** The `ttl` and `fallthrough` options, which k8s_external takes too. */
export function ttlAndFallthrough(
  plugin: string,
  once: Once,
  c: { ttl: number; fallthrough?: string[] },
): Handlers {
  return {
    ttl(opt) {
      once(opt);
      argCount(opt, plugin, 1, 1);
      c.ttl = parseIntArg(opt.args[0], plugin, 0, MAX_TTL);
    },
    fallthrough(opt) {
      once(opt);
      c.fallthrough = fallthroughZones(opt);
    },
  };
}

/** CoreDNS's options clusterdns does not have: each an error that says why. */
function unsupported(): Handlers {
  return Object.fromEntries(
    Object.entries(UNSUPPORTED).map(([name, why]) => [
      name,
      (opt: Directive) => {
        throw configError(opt, NAME, `'${name}' is not supported: ${why}`);
      },
    ]),
  );
}

/** How to reach the API: endpoint, tls, kubeconfig. */
function connectionOptions(c: KubernetesConfig, once: Once, path: (t: { text: string }) => string): Handlers {
  return {
    endpoint(opt) {
      once(opt);
      argCount(opt, NAME, 1, Infinity);
      for (const { text: url } of opt.args) {
        if (!/^https?:\/\/[^/\s]+/.test(url)) {
          throw configError(opt, NAME, `endpoint '${url}' is not an http(s) URL`);
        }
      }
      // Several are deprecated in CoreDNS, which warns and uses the first (config-source.ts warns).
      c.endpoint = opt.args[0].text;
      if (opt.args.length > 1) c.unusedEndpoints = opt.args.slice(1).map((t) => t.text);
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
  };
}

/** Which objects exist: namespaces, labels, namespace_labels. */
function scopeOptions(c: KubernetesConfig, once: Once): Handlers {
  const selector = (opt: Directive): [string, LabelSelector] => {
    argCount(opt, NAME, 1, Infinity);
    const text = opt.args.map((t) => t.text).join(" ");
    try {
      return [text, parseLabelSelector(text)];
    } catch (err) {
      throw configError(opt, NAME, `${opt.name}: ${(err as Error).message}`);
    }
  };
  return {
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
  };
}

/** Which names answer what: pods, endpoint_pod_names, noendpoints, ignore, zonal, multicluster. */
function answerOptions(c: KubernetesConfig, once: Once): Handlers {
  const flag = (set: () => void) => (opt: Directive) => {
    once(opt);
    argCount(opt, NAME, 0, 0);
    set();
  };
  return {
    pods(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const mode = opt.args[0].text;
      if (mode !== "disabled" && mode !== "insecure" && mode !== "verified") {
        throw configError(opt, NAME, `pods: unknown mode '${mode}' (want disabled, insecure or verified)`);
      }
      c.pods = mode;
    },
    endpoint_pod_names: flag(() => (c.endpointPodNames = true)),
    noendpoints: flag(() => (c.noEndpoints = true)),
    zonal: flag(() => (c.zonal = true)),
    ignore(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      if (opt.args[0].text !== "empty_service") {
        throw configError(opt, NAME, `ignore: unknown value '${opt.args[0].text}' (want empty_service)`);
      }
      c.ignoreEmptyService = true;
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
  };
}

/** Where the objects come from and how: startup_timeout, objects, snapshot, apiserver_*. */
function sourceOptions(c: KubernetesConfig, once: Once, path: (t: { text: string }) => string): Handlers {
  const limit = (set: (n: number) => void) => (opt: Directive) => {
    once(opt);
    argCount(opt, NAME, 1, 1);
    set(parseIntArg(opt.args[0], NAME, 1, 1_000_000));
  };
  return {
    startup_timeout(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      // Node's timers fire at once past 2^31-1 ms (24.8 days): a longer wait is that one.
      c.startupTimeoutMs = parseTimerDuration(opt.args[0], NAME);
    },
    objects(opt) {
      once(opt);
      argCount(opt, NAME, 1, Infinity);
      c.objects = opt.args.map(path);
    },
    snapshot(opt) {
      once(opt);
      argCount(opt, NAME, 1, 2);
      const intervalMs = opt.args[1] ? parseTimerDuration(opt.args[1], NAME) : DEFAULT_SNAPSHOT_INTERVAL_MS;
      if (intervalMs < 1000)
        throw configError(opt.args[1], NAME, "snapshot: the interval must be at least 1s");
      c.snapshot = { file: path(opt.args[0]), intervalMs };
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
    apiserver_burst: limit((n) => (c.limits.burst = n)),
    apiserver_max_inflight: limit((n) => (c.limits.maxInflight = n)),
  };
}

/** Options that cannot go together; an error at the directive names both. */
function checkTogether(d: Directive, c: KubernetesConfig): void {
  const conflict = (what: string) => configError(d, NAME, what);
  if (c.namespaces.length > 0 && c.namespaceSelector) {
    // CoreDNS refuses the two together (its words): a Corefile it will not start must not pass here.
    throw conflict("namespaces and namespace_labels cannot both be set");
  }
  if (c.zonal && c.noEndpoints) {
    // CoreDNS's words: zonal names come from the endpoints, which noendpoints does not read.
    throw conflict("zonal requires the endpoint cache; remove noendpoints");
  }
  if (c.multicluster && c.snapshot) {
    throw conflict("'snapshot' does not keep multi-cluster services yet: use one or the other");
  }
  if (c.objects && c.snapshot) {
    throw conflict("'snapshot' keeps what the API said; 'objects' reads files already");
  }
  if (c.objects && Object.keys(c.limits).length > 0) {
    throw conflict("'apiserver_*' limit requests to the API; 'objects' reads files");
  }
  if (c.objects && (c.endpoint !== undefined || c.kubeconfig !== undefined || c.tls)) {
    throw conflict("'objects' reads the cluster from files: it takes no endpoint, tls or kubeconfig");
  }
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

/** The options a snapshot was written under: one written under others would answer differently. */
export function snapshotSettings(c: KubernetesConfig): SnapshotSettings {
  return {
    zones: c.zones,
    namespaces: c.namespaces,
    labels: c.labels,
    namespaceLabels: c.namespaceLabels,
    pods: c.pods,
    endpointPodNames: c.endpointPodNames,
  };
}
