// The Kubernetes DNS programming latency SLI, as CoreDNS measures it (plugin/kubernetes/metrics.go):
// the time from the change that made the endpoints controller write an Endpoints or EndpointSlice
// object (its endpoints.kubernetes.io/last-change-trigger-time annotation) to the moment the DNS
// server answers with it. Only objects carrying the annotation count, which the controller writes for
// services with a selector: CoreDNS's "headless_with_selector" for a headless service, and since
// CoreDNS 1.14.3 "cluster_ip" for any other.

import type { Kind, KObject } from "../model/source.ts";
import { SERVICE_NAME_LABEL } from "../model/source.ts";
import { serviceKey } from "../model/object-key.ts";

export const TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";

export type ServiceKind = "cluster_ip" | "headless_with_selector";

/** The seconds since `obj`'s trigger time and its service's kind, when it is the endpoints of a known
 * service (`headless` says by its key whether it is headless, undefined: unknown) and carries a valid
 * trigger time; undefined otherwise. */
export function programmingSeconds(
  kind: Kind,
  obj: KObject,
  headless: (serviceKey: string) => boolean | undefined,
  now = Date.now(),
): { kind: ServiceKind; seconds: number } | undefined {
  const m = obj.metadata;
  const stamp = m.annotations?.[TRIGGER_TIME];
  const at = stamp === undefined ? NaN : Date.parse(stamp);
  if (Number.isNaN(at)) return undefined;
  const name =
    kind === "endpoints" ? m.name : kind === "endpointslices" ? m.labels?.[SERVICE_NAME_LABEL] : undefined;
  const isHeadless = name === undefined ? undefined : headless(serviceKey(m.namespace ?? "", name));
  if (isHeadless === undefined) return undefined;
  return {
    kind: isHeadless ? "headless_with_selector" : "cluster_ip",
    seconds: Math.max(0, now - at) / 1000,
  };
}
