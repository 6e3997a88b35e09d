// Builders for Kubernetes objects in the JSON shape kube-apiserver returns, with the defaults it (and
// the controllers that write EndpointSlices and Endpoints) would fill in. The test API server stamps
// uid, resourceVersion and creationTimestamp when an object is created; everything else is here.

import type {
  KEndpoints,
  KEndpointSlice,
  KObjectReference,
  KPod,
  KService,
  KServiceImport,
  ObjectMeta,
} from "../../src/plugins/kubernetes/model/source.ts";

export type Protocol = "TCP" | "UDP" | "SCTP";

export interface PortSpec {
  name?: string;
  port: number;
  protocol?: Protocol;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface ServiceOptions {
  /** Defaults to the next free address of 10.96.0.0/16 (ClusterIP, NodePort, LoadBalancer). */
  clusterIP?: string;
  /** Dual-stack: both addresses, primary first. Sets ipFamilies and PreferDualStack. */
  clusterIPs?: string[];
  ipFamilyPolicy?: "SingleStack" | "PreferDualStack" | "RequireDualStack";
  type?: "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName";
  /** Makes the Service type ExternalName. */
  externalName?: string;
  /** clusterIP None. */
  headless?: boolean;
  /** Bare numbers mean TCP ports without a name. */
  ports?: (PortSpec | number)[];
  /** Defaults to { app: name } except for ExternalName. */
  selector?: Record<string, string> | null;
  labels?: Record<string, string>;
  publishNotReadyAddresses?: boolean;
  /** spec.externalIPs. */
  externalIPs?: string[];
  /** status.loadBalancer.ingress, as a cloud controller writes it (LoadBalancer services). */
  ingress?: ({ ip: string } | { hostname: string })[];
  /** metadata.annotations. */
  annotations?: Record<string, string>;
}

/** The full Service shape; structurally a KService. */
export interface ServiceObject extends KService {
  spec: KService["spec"] & Record<string, unknown>;
  status: { loadBalancer: Record<string, unknown> };
}

let nextClusterIP = 100;
let nextNodePort = 30000;
let nextSuffix = 0;

function allocateClusterIP(): string {
  const n = nextClusterIP++;
  return `10.96.${(n >> 8) & 255}.${n & 255}`;
}

function family(ip: string): "IPv4" | "IPv6" {
  return ip.includes(":") ? "IPv6" : "IPv4";
}

function suffix(): string {
  // Controllers name generated objects with five random lowercase alphanumerics; a counter keeps
  // tests deterministic.
  return (nextSuffix++).toString(36).padStart(5, "x");
}

function meta(name: string, namespace: string | undefined, labels?: Record<string, string>): ObjectMeta {
  const m: ObjectMeta = { name };
  if (namespace !== undefined) m.namespace = namespace;
  if (labels && Object.keys(labels).length > 0) m.labels = { ...labels };
  return m;
}

function servicePort(p: PortSpec | number, nodePorts: boolean): Record<string, unknown> & { port: number } {
  const spec: PortSpec = typeof p === "number" ? { port: p } : p;
  const out: Record<string, unknown> & { port: number } = { port: spec.port };
  if (spec.name !== undefined) out.name = spec.name;
  out.protocol = spec.protocol ?? "TCP";
  if (spec.appProtocol !== undefined) out.appProtocol = spec.appProtocol;
  out.targetPort = spec.targetPort ?? spec.port;
  if (nodePorts) out.nodePort = spec.nodePort ?? nextNodePort++;
  return out;
}

export function service(namespace: string, name: string, o: ServiceOptions = {}): ServiceObject {
  const type = o.externalName !== undefined ? "ExternalName" : (o.type ?? "ClusterIP");
  const spec: Record<string, unknown> = {};
  const nodePorts = type === "NodePort" || type === "LoadBalancer";
  if (o.ports && o.ports.length > 0) spec.ports = o.ports.map((p) => servicePort(p, nodePorts));
  const selector = o.selector === undefined ? (type === "ExternalName" ? null : { app: name }) : o.selector;
  if (selector) spec.selector = { ...selector };

  if (type === "ExternalName") {
    spec.type = type;
    spec.sessionAffinity = "None";
    spec.externalName = o.externalName;
  } else {
    const ips = o.headless ? ["None"] : (o.clusterIPs ?? [o.clusterIP ?? allocateClusterIP()]);
    spec.clusterIP = ips[0];
    spec.clusterIPs = ips;
    spec.type = type;
    spec.sessionAffinity = "None";
    spec.ipFamilies = o.headless ? ["IPv4"] : ips.map(family);
    spec.ipFamilyPolicy = o.ipFamilyPolicy ?? (ips.length > 1 ? "PreferDualStack" : "SingleStack");
    spec.internalTrafficPolicy = "Cluster";
    if (nodePorts) spec.externalTrafficPolicy = "Cluster";
    if (type === "LoadBalancer") spec.allocateLoadBalancerNodePorts = true;
  }
  if (o.publishNotReadyAddresses) spec.publishNotReadyAddresses = true;
  if (o.externalIPs) spec.externalIPs = [...o.externalIPs];
  const metadata = meta(name, namespace, o.labels);
  if (o.annotations) metadata.annotations = { ...o.annotations };
  const ingress = o.ingress?.map((i) => ("ip" in i ? { ...i, ipMode: "VIP" } : { ...i }));

  return {
    kind: "Service",
    apiVersion: "v1",
    metadata,
    spec: spec as ServiceObject["spec"],
    status: { loadBalancer: ingress ? { ingress } : {} },
  };
}

export interface SliceEndpointSpec {
  /** One address; or `addresses` for several (FQDN slices). */
  ip?: string;
  addresses?: string[];
  /** Defaults to true unless terminating. */
  ready?: boolean;
  /** Defaults to `ready`. */
  serving?: boolean;
  terminating?: boolean;
  hostname?: string;
  nodeName?: string;
  zone?: string;
  /** Topology hints: hints.forZones, by zone name. */
  hints?: string[];
  /** The backing pod: sets targetRef { kind: Pod, namespace, name }. */
  pod?: string;
}

export interface SlicePortSpec {
  name?: string;
  port: number;
  protocol?: Protocol;
  appProtocol?: string;
}

export interface EndpointSliceOptions {
  /** Omitted gives `ports: null`, as the API sends it for a slice without ports. */
  ports?: SlicePortSpec[];
  /** Defaults to IPv4. */
  addressType?: "IPv4" | "IPv6" | "FQDN";
  /** Labels copied from the Service (the controller mirrors them). */
  labels?: Record<string, string>;
  managedBy?: string;
  /** The Service's uid: sets the ownerReference the controller writes. */
  serviceUid?: string;
  /** metadata.annotations (endpoints.kubernetes.io/last-change-trigger-time, ...). */
  annotations?: Record<string, string>;
}

/** The full EndpointSlice shape; structurally a KEndpointSlice. */
export type EndpointSliceObject = KEndpointSlice & { metadata: ObjectMeta & Record<string, unknown> };

function podRef(namespace: string, pod: string): KObjectReference {
  return { kind: "Pod", namespace, name: pod };
}

/** An EndpointSlice of Service `svc`. `name` defaults to `svc-xxxxx` as the controller generates it. */
export function endpointSlice(
  namespace: string,
  svc: string,
  name: string | undefined,
  endpoints: (SliceEndpointSpec | string)[],
  o: EndpointSliceOptions = {},
): EndpointSliceObject {
  const { ports, addressType = "IPv4" } = o;
  const labels = {
    ...o.labels,
    "endpointslice.kubernetes.io/managed-by": o.managedBy ?? "endpointslice-controller.k8s.io",
    "kubernetes.io/service-name": svc,
  };
  const metadata: EndpointSliceObject["metadata"] = {
    ...meta(name ?? `${svc}-${suffix()}`, namespace, labels),
    generateName: `${svc}-`,
    generation: 1,
  };
  if (o.annotations) metadata.annotations = { ...o.annotations };
  if (o.serviceUid) {
    metadata.ownerReferences = [
      {
        apiVersion: "v1",
        kind: "Service",
        name: svc,
        uid: o.serviceUid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
  }
  return {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    metadata,
    addressType,
    endpoints: endpoints.map((e) => {
      const s: SliceEndpointSpec = typeof e === "string" ? { ip: e } : e;
      const terminating = s.terminating ?? false;
      const ready = s.ready ?? !terminating;
      const out: NonNullable<KEndpointSlice["endpoints"]>[number] = {
        addresses: s.addresses ?? (s.ip !== undefined ? [s.ip] : []),
        conditions: { ready, serving: s.serving ?? ready, terminating },
      };
      if (s.hostname !== undefined) out.hostname = s.hostname;
      if (s.pod !== undefined) out.targetRef = podRef(namespace, s.pod);
      if (s.nodeName !== undefined) out.nodeName = s.nodeName;
      if (s.zone !== undefined) out.zone = s.zone;
      if (s.hints !== undefined) out.hints = { forZones: s.hints.map((z) => ({ name: z })) };
      return out;
    }),
    ports: ports
      ? ports.map((p) => {
          const out: { name?: string; protocol: string; port: number; appProtocol?: string } = {
            name: p.name ?? "",
            protocol: p.protocol ?? "TCP",
            port: p.port,
          };
          if (p.appProtocol !== undefined) out.appProtocol = p.appProtocol;
          return out;
        })
      : null,
  };
}

export interface AddressSpec {
  ip: string;
  hostname?: string;
  nodeName?: string;
  pod?: string;
}

export interface SubsetSpec {
  addresses?: (AddressSpec | string)[];
  notReadyAddresses?: (AddressSpec | string)[];
  ports?: SlicePortSpec[];
}

/** A legacy Endpoints object named like its Service. Empty address lists are omitted, as the API does. */
export function endpoints(
  namespace: string,
  name: string,
  subsets: SubsetSpec[],
  labels?: Record<string, string>,
  annotations?: Record<string, string>,
): KEndpoints {
  const address = (a: AddressSpec | string) => {
    const s: AddressSpec = typeof a === "string" ? { ip: a } : a;
    const out: NonNullable<NonNullable<KEndpoints["subsets"]>[number]["addresses"]>[number] = { ip: s.ip };
    if (s.hostname !== undefined) out.hostname = s.hostname;
    if (s.nodeName !== undefined) out.nodeName = s.nodeName;
    if (s.pod !== undefined) out.targetRef = podRef(namespace, s.pod);
    return out;
  };
  const obj: KEndpoints = { kind: "Endpoints", apiVersion: "v1", metadata: meta(name, namespace, labels) };
  if (annotations) obj.metadata.annotations = { ...annotations };
  const out = subsets.map((s) => {
    const subset: NonNullable<KEndpoints["subsets"]>[number] = {};
    if (s.addresses && s.addresses.length > 0) subset.addresses = s.addresses.map(address);
    if (s.notReadyAddresses && s.notReadyAddresses.length > 0) {
      subset.notReadyAddresses = s.notReadyAddresses.map(address);
    }
    if (s.ports && s.ports.length > 0) {
      subset.ports = s.ports.map((p) => {
        const port: { name?: string; port: number; protocol?: string } = { port: p.port };
        if (p.name !== undefined) port.name = p.name;
        port.protocol = p.protocol ?? "TCP";
        return port;
      });
    }
    return subset;
  });
  if (out.length > 0) obj.subsets = out;
  return obj;
}

export function namespace(name: string, labels?: Record<string, string>) {
  return {
    kind: "Namespace",
    apiVersion: "v1",
    metadata: meta(name, undefined, { ...labels, "kubernetes.io/metadata.name": name }),
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

export interface PodOptions {
  labels?: Record<string, string>;
  nodeName?: string;
  hostNetwork?: boolean;
  phase?: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";
  /** Every pod IP (dual-stack); defaults to [ip]. */
  ips?: string[];
  hostname?: string;
  subdomain?: string;
  hostIP?: string;
}

/** The full Pod shape; structurally a KPod. */
export interface PodObject extends KPod {
  spec: NonNullable<KPod["spec"]> & Record<string, unknown>;
  status: NonNullable<KPod["status"]> & Record<string, unknown>;
}

export function pod(namespace: string, name: string, ip: string, o: PodOptions = {}): PodObject {
  const nodeName = o.nodeName ?? "node-1";
  const hostIP = o.hostIP ?? "172.18.0.2";
  const spec: PodObject["spec"] = {
    containers: [
      {
        name: "app",
        image: "registry.k8s.io/pause:3.10",
        resources: {},
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent",
      },
    ],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: o.hostNetwork ? "ClusterFirstWithHostNet" : "ClusterFirst",
    serviceAccountName: "default",
    serviceAccount: "default",
    nodeName,
    securityContext: {},
    schedulerName: "default-scheduler",
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
  };
  if (o.hostNetwork) spec.hostNetwork = true;
  if (o.hostname !== undefined) spec.hostname = o.hostname;
  if (o.subdomain !== undefined) spec.subdomain = o.subdomain;
  const ips = o.hostNetwork ? [hostIP] : (o.ips ?? [ip]);
  return {
    kind: "Pod",
    apiVersion: "v1",
    metadata: meta(name, namespace, o.labels),
    spec,
    status: {
      phase: o.phase ?? "Running",
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP: ips[0],
      podIPs: ips.map((x) => ({ ip: x })),
      qosClass: "BestEffort",
    },
  };
}

export interface ServiceImportOptions {
  /** Defaults to ClusterSetIP. */
  type?: "ClusterSetIP" | "Headless";
  /** The clusterset IPs (ClusterSetIP). */
  ips?: string[];
  /** Bare numbers mean TCP ports without a name. */
  ports?: (PortSpec | number)[];
  /** The clusters that export the service (status.clusters). */
  clusters?: string[];
}

/** A ServiceImport (multicluster.x-k8s.io/v1alpha1) as an MCS controller writes it. */
export function serviceImport(namespace: string, name: string, o: ServiceImportOptions = {}): KServiceImport {
  const type = o.type ?? "ClusterSetIP";
  const spec: NonNullable<KServiceImport["spec"]> & Record<string, unknown> = {
    type,
    ports: (o.ports ?? []).map((p) => {
      const s: PortSpec = typeof p === "number" ? { port: p } : p;
      return {
        ...(s.name !== undefined ? { name: s.name } : {}),
        protocol: s.protocol ?? "TCP",
        port: s.port,
      };
    }),
    sessionAffinity: "None",
  };
  if (type === "ClusterSetIP") spec.ips = o.ips ?? [];
  return {
    kind: "ServiceImport",
    apiVersion: "multicluster.x-k8s.io/v1alpha1",
    metadata: meta(name, namespace),
    spec,
    status: { clusters: (o.clusters ?? []).map((cluster) => ({ cluster })) },
  } as KServiceImport;
}

export interface ImportedSliceOptions {
  /** The source cluster the slice was imported from. */
  cluster: string;
  ports?: SlicePortSpec[];
  /** Defaults to IPv4. */
  addressType?: "IPv4" | "IPv6";
}

/** An EndpointSlice an MCS controller imported for the ServiceImport `svc` from `o.cluster` (KEP-1645):
 * labelled with the import and its source cluster, not with a Service. */
export function importedSlice(
  namespace: string,
  svc: string,
  name: string,
  endpoints: (SliceEndpointSpec | string)[],
  o: ImportedSliceOptions,
): EndpointSliceObject {
  const { cluster, ports, addressType = "IPv4" } = o;
  const s = endpointSlice(namespace, svc, name, endpoints, {
    ports,
    addressType,
    managedBy: "mcs-controller.multicluster.x-k8s.io",
  });
  const labels = { ...s.metadata.labels };
  delete labels["kubernetes.io/service-name"];
  s.metadata.labels = {
    ...labels,
    "multicluster.kubernetes.io/service-name": svc,
    "multicluster.kubernetes.io/source-cluster": cluster,
  };
  return s;
}
