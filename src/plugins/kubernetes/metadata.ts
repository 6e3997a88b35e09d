// The labels the kubernetes plugin publishes when the block has `metadata` (CoreDNS's kubernetes
// README, "Metadata"): what the question names (kind, namespace, service, endpoint, port-name,
// protocol; parse-error for a name that is not one), and, with `pods verified`, which pod asked
// (client-namespace, client-pod-name). Worked out when read; nothing is kept per query.

import type { MetaLabel, MetaQuery, MetadataProvider } from "../metadata/labels.ts";
import type { StoreView } from "./store/store-view.ts";
import type { PodMode } from "./answers/records.ts";
import { isSubdomain, labelsBelow } from "../../dns/name.ts";
import { normalIP } from "./model/addresses.ts";

/** What CoreDNS's parseRequest makes of a name in the zone; `error` for one it refuses. */
interface Parsed {
  kind: string;
  namespace: string;
  service: string;
  endpoint: string;
  port: string;
  protocol: string;
  error?: string;
}

const QUESTION_LABELS: Record<string, (p: Parsed) => string | undefined> = {
  "kubernetes/kind": (p) => valueOf(p, p.kind),
  "kubernetes/namespace": (p) => valueOf(p, p.namespace),
  "kubernetes/service": (p) => valueOf(p, p.service),
  "kubernetes/endpoint": (p) => valueOf(p, p.endpoint),
  "kubernetes/port-name": (p) => valueOf(p, p.port),
  "kubernetes/protocol": (p) => valueOf(p, p.protocol),
  "kubernetes/parse-error": (p) => p.error,
};

/** A name CoreDNS cannot parse publishes only parse-error. */
function valueOf(p: Parsed, v: string): string | undefined {
  return p.error === undefined ? v : undefined;
}

export function kubernetesMetadata(
  store: StoreView,
  zones: readonly string[],
  pods: PodMode,
): MetadataProvider {
  const parsed = (q: MetaQuery): Parsed | undefined => {
    const zone = zones.find((z) => isSubdomain(q.qname, z));
    return zone === undefined ? undefined : parseName(q.qname, zone);
  };
  const pod = (q: MetaQuery) => {
    if (pods !== "verified") return undefined;
    const a = q.remoteAddress;
    // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d.
    const ip = normalIP(a.startsWith("::ffff:") ? a.slice(7) : a);
    return ip === undefined ? undefined : store.podsByIP(ip)[0];
  };
  return {
    label(name): MetaLabel | undefined {
      if (name === "kubernetes/client-namespace") return { value: (q) => pod(q)?.ns, perClient: true };
      if (name === "kubernetes/client-pod-name") return { value: (q) => pod(q)?.name, perClient: true };
      const get = QUESTION_LABELS[name];
      if (get === undefined) return undefined;
      return {
        value: (q) => {
          const p = parsed(q);
          return p === undefined ? undefined : get(p);
        },
        perClient: false,
      };
    },
  };
}

/** CoreDNS's cases: [_port._protocol.|endpoint.]service.namespace.(svc|pod).zone, parts absent from
 * the name empty; anything else below the zone is "invalid request". The zone itself and the bare
 * `svc` and `pod` names parse to nothing. */
export function parseName(qname: string, zone: string): Parsed {
  const p: Parsed = { kind: "", namespace: "", service: "", endpoint: "", port: "", protocol: "" };
  const segs = labelsBelow(qname, zone);
  let last = segs.length - 1;
  if (last < 0 || (last === 0 && (segs[0] === "svc" || segs[0] === "pod"))) return p;
  p.kind = segs[last];
  if (p.kind !== "svc" && p.kind !== "pod") return { ...p, error: "invalid request" };
  const take = () => (--last < 0 ? undefined : segs[last]);
  p.namespace = take() ?? "";
  p.service = take() ?? "";
  const rest = last;
  if (rest === 1) p.endpoint = segs[0];
  else if (rest === 2) {
    p.protocol = segs[1].replace(/^_/, "");
    p.port = segs[0].replace(/^_/, "");
  } else if (rest > 2) return { ...p, error: "invalid request" };
  return p;
}
