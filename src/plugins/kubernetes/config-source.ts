// The Source a kubernetes configuration reads the cluster from: its `objects` files, or the API (the
// client loaded only then, so reading files never loads it), with the API's list/watch health for
// the metrics.

import type { Logger } from "pino";
import type { Kind, Source } from "./model/source.ts";
import type { KubernetesConfig } from "./config.ts";
import { objectsSource } from "./api/objects-file.ts";
import type { ApiSourceStats } from "./api/source-api.ts";

export interface ConfiguredSource {
  readonly source: Source;
  /** The API's list/watch health; undefined when reading files. */
  readonly apiStats?: () => ApiSourceStats;
}

/** The source of `c` for `kinds`. Throws on bad connection settings (a kubeconfig that does not
 * load, ...), with a message fit for the Corefile's error line. `checkOnly` (-validate): an API the
 * environment would name (a pod's service account, $KUBECONFIG) is not looked for; the machine
 * running the check does not have to have it. */
export async function configuredSource(
  c: KubernetesConfig,
  kinds: readonly Kind[],
  log: Logger,
  checkOnly = false,
): Promise<ConfiguredSource> {
  if (c.objects) {
    // A dump may hold both EndpointSlices and Endpoints: the store prefers the slices.
    const fileKinds: Kind[] = c.noEndpoints ? [...kinds] : [...kinds, "endpoints"];
    const source = objectsSource({
      files: c.objects,
      kinds: fileKinds,
      namespaces: c.namespaces,
      labelSelector: c.labelSelector,
    });
    return { source };
  }
  if (checkOnly && c.kubeconfig === undefined && c.endpoint === undefined) {
    return { source: objectsSource({ files: [], kinds: [...kinds], namespaces: c.namespaces }) };
  }
  // The kubeconfig names the API when both are given, as in CoreDNS.
  const endpoint = c.kubeconfig === undefined ? c.endpoint : undefined;
  if (c.endpoint !== undefined && endpoint === undefined)
    log.warn({ endpoint: c.endpoint }, "endpoint is ignored beside kubeconfig, as in CoreDNS");
  if (c.tls && endpoint === undefined) log.warn("tls is ignored without endpoint, as in CoreDNS");
  if (c.unusedEndpoints && endpoint !== undefined) {
    log.warn(
      { endpoint: c.endpoint, unused: c.unusedEndpoints },
      "several endpoints are deprecated (CoreDNS too uses the first alone): the others are ignored",
    );
  }
  const { apiSource } = await import("./api/source-api.ts");
  const source = apiSource({
    kubeconfig: c.kubeconfig,
    context: c.context,
    endpoint,
    tls: endpoint !== undefined ? c.tls : undefined,
    kinds: [...kinds],
    labelSelector: c.labels,
    namespaces: c.namespaces.length > 0 ? c.namespaces : undefined,
    limits: c.limits,
    log,
  });
  return { source, apiStats: () => source.stats() };
}
