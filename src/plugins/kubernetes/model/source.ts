// The contract between where cluster objects come from (the API through reflectors, or a file of
// objects) and the store that indexes them. Objects cross it in the JSON shape kube-apiserver sends
// (lists and watch events alike); the store keeps only what DNS needs.

/** The resources the plugin reads, by their API plural. */
export type Kind = "services" | "endpointslices" | "endpoints" | "namespaces" | "pods" | "serviceimports";

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}

/** Any object as the API sends it; the fields DNS reads are typed in the K* interfaces below. */
export interface KObject {
  kind?: string;
  apiVersion?: string;
  metadata: ObjectMeta;
}

export interface KServicePort {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface KService extends KObject {
  spec: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    ports?: KServicePort[];
    externalName?: string;
    publishNotReadyAddresses?: boolean;
    selector?: Record<string, string>;
    externalIPs?: string[];
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

export interface KObjectReference {
  kind?: string;
  name?: string;
  namespace?: string;
}

export interface KEndpointSlice extends KObject {
  addressType: "IPv4" | "IPv6" | "FQDN";
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
    hostname?: string;
    nodeName?: string;
    zone?: string;
    hints?: { forZones?: { name?: string }[] };
    targetRef?: KObjectReference;
  }[];
  ports?: { name?: string; port?: number; protocol?: string }[] | null;
}

export interface KEndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: KObjectReference;
}

export interface KEndpoints extends KObject {
  subsets?: {
    addresses?: KEndpointAddress[];
    notReadyAddresses?: KEndpointAddress[];
    ports?: { name?: string; port: number; protocol?: string }[];
  }[];
}

export interface KPod extends KObject {
  spec?: { hostNetwork?: boolean; dnsPolicy?: string; dnsConfig?: { searches?: string[] } | null };
  status?: { phase?: string; podIP?: string; podIPs?: { ip: string }[] };
}

/** The label an EndpointSlice names its Service with. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** A ServiceImport of the Multi-Cluster Services API (multicluster.x-k8s.io/v1alpha1). */
export interface KServiceImport extends KObject {
  spec?: {
    type?: string;
    ips?: string[];
    ports?: { name?: string; port?: number; protocol?: string; appProtocol?: string }[];
  };
}

/** The labels an imported EndpointSlice names its ServiceImport and its cluster with (KEP-1645). */
export const MCS_SERVICE_NAME_LABEL = "multicluster.kubernetes.io/service-name";
export const MCS_SOURCE_CLUSTER_LABEL = "multicluster.kubernetes.io/source-cluster";

/** Where a source delivers objects. One LIST (all its pages) is framed by listStart and listDone: an
 * object of that kind the list did not deliver is deleted at listDone, so a relist applies page by
 * page and never holds two copies of the cluster. */
export interface Sink {
  listStart(kind: Kind): void;
  apply(kind: Kind, type: EventType, obj: KObject): void;
  listDone(kind: Kind): void;
}

/** A producer of objects for a set of kinds: the API (reflectors) or a file. */
export interface Source {
  /** Starts delivering; resolves once it has begun (not once synced). Never gives up on errors. */
  start(sink: Sink): Promise<void>;
  stop(): Promise<void>;
  /** One line for /ready and logs: "api https://10.0.0.1:443 (connected)", "file demo.yaml", ... */
  describe(): string;
}
