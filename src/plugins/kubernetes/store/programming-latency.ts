// The Kubernetes DNS programming latency SLI, as CoreDNS measures it (plugin/kubernetes/metrics.go):
// the time from the change that made the endpoints controller write an Endpoints or EndpointSlice
// object (its endpoints.kubernetes.io/last-change-trigger-time annotation) to the moment the DNS
// server answers with it. Only headless services count, and only objects carrying the annotation, which
// the controller writes for services with a selector: CoreDNS's "headless_with_selector".

import type { Kind, KObject } from "../model/source.ts";
import { SERVICE_NAME_LABEL } from "../model/source.ts";
import { serviceKey } from "../model/object-key.ts";

export const TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";

/** The seconds since `obj`'s trigger time, when it is the endpoints of a headless service (`headless`
 * says so by its key) and carries a valid trigger time; undefined otherwise. */
export function programmingSeconds(
  kind: Kind,
  obj: KObject,
  headless: (serviceKey: string) => boolean,
  now = Date.now(),
): number | undefined {
  const m = obj.metadata;
  const stamp = m.annotations?.[TRIGGER_TIME];
  const at = stamp === undefined ? NaN : Date.parse(stamp);
  if (Number.isNaN(at)) return undefined;
  const name =
    kind === "endpoints" ? m.name : kind === "endpointslices" ? m.labels?.[SERVICE_NAME_LABEL] : undefined;
  if (name === undefined || !headless(serviceKey(m.namespace ?? "", name))) return undefined;
  return Math.max(0, now - at) / 1000;
}
