// API objects cut down to what DNS needs (../model/slim-types.ts) the moment they arrive: the store keeps no
// raw object. Endpoints come out packed and port sets shared (packed.ts), since a big cluster has
// hundreds of thousands of them.

import { isIPv4 } from "node:net";
import type { KEndpoints, KEndpointSlice, KPod, KService } from "../model/source.ts";
import { SERVICE_NAME_LABEL } from "../model/source.ts";
import type { Endpoint, EndpointGroup, Service, SlimPod, SvcPort } from "../model/slim-types.ts";
import { PortSets, Topologies, dashed, packedEndpoint, protoName, type Topology } from "./packed.ts";
import { serviceKey } from "../model/object-key.ts";
import { normalIP } from "../model/addresses.ts";

export { normalIP } from "../model/addresses.ts";
import { canonical } from "../../../dns/name.ts";

const TOLERATE_UNREADY = "service.alpha.kubernetes.io/tolerate-unready-endpoints";
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

export interface SlimOptions {
  /** endpoint_pod_names: name endpoints without a hostname after their pod. */
  endpointPodNames?: boolean;
}

/** Slims the objects of one store; shares port sets among them. */
export class Slimmer {
  readonly #endpointPodNames: boolean;
  readonly #portSets = new PortSets();
  /** The class of this store's endpoints, with their topologies. */
  readonly #Endpoint = packedEndpoint(new Topologies());

  constructor(o: SlimOptions = {}) {
    this.#endpointPodNames = o.endpointPodNames ?? false;
  }

  /** One object literal per kind of service, all fields in place: a spread kept them in a second
   * array beside the object. Undefined for a service DNS cannot publish. */
  service(o: KService): Service | undefined {
    const spec = o.spec ?? {};
    const { name, namespace: ns } = o.metadata;
    if (!ns) return undefined;
    const type = spec.type ?? "ClusterIP";
    const annotations = o.metadata.annotations;
    const ports = this.#portSets.intern(slimPorts(spec.ports));
    const publishNotReadyAddresses =
      spec.publishNotReadyAddresses === true || annotations?.[TOLERATE_UNREADY] === "true";
    if (type === "ExternalName") {
      if (typeof spec.externalName !== "string" || spec.externalName === "") return undefined;
      // A name of digits that reads as an address is one DNS does not resolve (the Service docs);
      // CoreDNS publishes nothing for it, rather than a CNAME to `1.2.3.4.`.
      if (isIPv4(spec.externalName.replace(/\.$/, ""))) return undefined;
      const externalName = canonical(spec.externalName);
      return {
        name,
        ns,
        type,
        ports,
        publishNotReadyAddresses,
        clusterIPs: NONE,
        headless: false,
        externalName,
      };
    }
    const ips = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
    const headless = ips[0] === "None";
    const clusterIPs = headless ? NONE : exact(ips.map(normalIP).filter((ip) => ip !== undefined));
    const external = externalAddresses(o);
    if (external.length > 0) {
      return { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless, external };
    }
    return { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless };
  }

  slice(o: KEndpointSlice): EndpointGroup | undefined {
    const service = o.metadata.labels?.[SERVICE_NAME_LABEL];
    if (!service || !o.metadata.namespace) return undefined;
    const endpoints: Endpoint[] = [];
    if (o.addressType === "IPv4" || o.addressType === "IPv6") {
      for (const e of arrayOf(o.endpoints)) {
        const c = e?.conditions ?? {};
        // The API says a missing ready means ready; a terminating endpoint is not ready.
        const ready = c.ready ?? c.terminating !== true;
        for (const a of arrayOf(e?.addresses)) {
          const ip = normalIP(a);
          if (!ip) continue;
          const pod = e.targetRef?.kind === "Pod" ? e.targetRef.name : undefined;
          endpoints.push(new this.#Endpoint(ip, this.#endpointLabel(e.hostname, pod), ready, topology(e)));
        }
      }
    }
    return {
      service: serviceKey(o.metadata.namespace ?? "", service),
      ports: this.#portSets.intern(slimPorts(o.ports)),
      endpoints: exact(endpoints),
    };
  }

  /** A legacy Endpoints object: one group per subset. */
  endpoints(o: KEndpoints): readonly EndpointGroup[] | undefined {
    const ns = o.metadata.namespace;
    if (!ns) return undefined;
    const service = serviceKey(ns, o.metadata.name);
    const groups: EndpointGroup[] = [];
    for (const s of arrayOf(o.subsets)) {
      const endpoints: Endpoint[] = [];
      for (const [list, ready] of [
        [s?.addresses, true],
        [s?.notReadyAddresses, false],
      ] as const) {
        for (const a of arrayOf(list)) {
          const ip = normalIP(a?.ip);
          if (!ip) continue;
          const pod = a.targetRef?.kind === "Pod" ? a.targetRef.name : undefined;
          endpoints.push(new this.#Endpoint(ip, this.#endpointLabel(a.hostname, pod), ready));
        }
      }
      groups.push({ service, ports: this.#portSets.intern(slimPorts(s?.ports)), endpoints });
    }
    return groups;
  }

  /** A group read back from a snapshot, in the packed form. */
  pack(g: EndpointGroup): EndpointGroup {
    const endpoints = g.endpoints.map(
      (e) => new this.#Endpoint(e.ip, e.name === dashed(e.ip) ? undefined : e.name, Boolean(e.ready), e),
    );
    return { service: g.service, ports: this.#portSets.intern(g.ports), endpoints: exact(endpoints) };
  }

  /** The endpoint's DNS label: its hostname, else (with endpoint_pod_names) its pod's name; undefined
   * for the dashed address. */
  #endpointLabel(hostname: string | undefined, pod: string | undefined): string | undefined {
    if (hostname && LABEL.test(hostname)) return hostname.toLowerCase();
    if (this.#endpointPodNames && pod && LABEL.test(pod)) return pod.toLowerCase();
    return undefined;
  }
}

/** What k8s_external publishes for a service: spec.externalIPs, then status.loadBalancer.ingress (an
 * address, else a hostname), as CoreDNS orders them; duplicates once. */
function externalAddresses(o: KService): readonly string[] {
  const out: string[] = [];
  for (const ip of arrayOf(o.spec?.externalIPs)) {
    const n = normalIP(ip);
    if (n !== undefined && !out.includes(n)) out.push(n);
  }
  for (const ing of arrayOf(o.status?.loadBalancer?.ingress)) {
    const n = normalIP(ing?.ip) ?? hostName(ing?.hostname);
    if (n !== undefined && !out.includes(n)) out.push(n);
  }
  return exact(out);
}

const HOSTNAME = /^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+$/;

/** A load balancer's hostname as a canonical name, or undefined when it is not a domain name. */
function hostName(h: unknown): string | undefined {
  if (typeof h !== "string" || h === "" || h.length > 253) return undefined;
  const n = canonical(h);
  return HOSTNAME.test(n) ? n : undefined;
}

/** An endpoint's zone and hinted zones, lowercase; undefined when it has neither. A zone may hold dots
 * (a zonal name then spans labels, as in CoreDNS); one that is not DNS labels joined by dots is left
 * out: no zonal name could ask for it. */
function topology(e: { zone?: string; hints?: { forZones?: { name?: string }[] } }): Topology | undefined {
  const zoned = typeof e.zone === "string" && e.zone.split(".").every((l) => LABEL.test(l));
  const zone = zoned ? e.zone!.toLowerCase() : undefined;
  const hinted = arrayOf(e.hints?.forZones)
    .map((z) => z?.name)
    .filter((z) => typeof z === "string" && z !== "")
    .map((z) => z!.toLowerCase());
  if (zone === undefined && hinted.length === 0) return undefined;
  return hinted.length > 0 ? { zone, forZones: hinted } : { zone };
}

/** A pod's namespace, name and addresses; undefined for one that owns no address. */
export function slimPod(o: KPod): SlimPod | undefined {
  const { name, namespace, deletionTimestamp } = o.metadata;
  const phase = o.status?.phase;
  // A pod being deleted or finished no longer owns its address.
  if (!namespace || deletionTimestamp || phase === "Succeeded" || phase === "Failed") return undefined;
  const raw = o.status?.podIPs?.length ? o.status.podIPs.map((p) => p?.ip) : [o.status?.podIP];
  const ips = exact([...new Set(raw.map(normalIP).filter((ip) => ip !== undefined))]);
  if (ips.length === 0) return undefined;
  const pod: SlimPod = { ns: namespace, name, ips };
  if (o.spec?.hostNetwork === true) pod.hostNetwork = true;
  // kubelet writes `<ns>.svc.<zone> svc.<zone> <zone>` and the node's domains only for ClusterFirst
  // (the default) without dnsConfig searches: any other list autopath cannot walk for the pod.
  const policy = o.spec?.dnsPolicy;
  if (policy === "None" || policy === "Default" || (o.spec?.dnsConfig?.searches?.length ?? 0) > 0) {
    pod.ownSearch = true;
  }
  return pod;
}

export function slimPorts(
  ports: readonly { name?: string; port?: number; protocol?: string }[] | null | undefined,
) {
  const out: SvcPort[] = [];
  for (const p of arrayOf(ports)) {
    // A number no port can have (the API takes 1 to 65535) is dropped: the store's tables hold
    // integers only (codecs.ts).
    if (typeof p?.port !== "number" || !Number.isInteger(p.port) || p.port < 0 || p.port > 65535) continue;
    out.push({
      name: (p.name ?? "").toLowerCase(),
      proto: protoName(p.protocol),
      port: p.port,
    });
  }
  return exact(out);
}

function arrayOf<T>(v: readonly T[] | null | undefined): readonly T[] {
  return Array.isArray(v) ? v : [];
}

const NONE: readonly never[] = Object.freeze([]);

/** The array at its length: one grown by push keeps spare slots (16 for a one-element array), and
 * the store holds tens of thousands of small arrays. */
function exact<T>(a: T[]): readonly T[] {
  return a.length === 0 ? NONE : a.slice();
}
