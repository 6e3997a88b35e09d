// What the store keeps of each API object: only the fields DNS needs, in these shapes. slim.ts cuts
// API objects down to them, packed.ts holds the compact forms of the most numerous ones, and a
// snapshot file (snapshot.ts) holds them as JSON.

export interface SvcPort {
  /** Lowercase; "" for an unnamed port (which has no SRV record). */
  readonly name: string;
  /** Lowercase: "tcp", "udp", "sctp". */
  readonly proto: string;
  readonly port: number;
}

export interface Service {
  readonly name: string;
  readonly ns: string;
  readonly type: string;
  /** Canonical addresses, primary family first; empty for headless and ExternalName services. */
  readonly clusterIPs: readonly string[];
  readonly headless: boolean;
  /** Canonical target of an ExternalName service. */
  readonly externalName?: string;
  readonly ports: readonly SvcPort[];
  /** spec.publishNotReadyAddresses, or the spec's tolerate-unready-endpoints annotation. */
  readonly publishNotReadyAddresses: boolean;
  /** What k8s_external publishes: spec.externalIPs, then the load balancer's ingress addresses, as
   * canonical addresses, and ingress hostnames as canonical names (ending in "."). Present only on the
   * few services that have any, so the others pay nothing for it. */
  readonly external?: readonly string[];
}

/** One address of an endpoint. `name` is its DNS label: the hostname, else (with endpoint_pod_names)
 * the target pod's name, else the dashed address ("10-244-4-3", "fd00--1"). */
export interface Endpoint {
  readonly ip: string;
  readonly name: string;
  readonly ready: boolean;
  /** The EndpointSlice's `zone` of the endpoint, lowercase (zonal names pin to it). */
  readonly zone?: string;
  /** The zones its topology hints (`hints.forZones`) say it serves, lowercase. */
  readonly forZones?: readonly string[];
}

/** The endpoints of one EndpointSlice (or one subset of an Endpoints object) with their ports. */
export interface EndpointGroup {
  /** The key of the service: "namespace/name". */
  readonly service: string;
  readonly ports: readonly SvcPort[];
  readonly endpoints: readonly Endpoint[];
}

export interface PodRef {
  readonly ns: string;
  readonly name: string;
  /** The pod shares its node's address: the address says nothing about who asked. */
  readonly hostNetwork?: true;
  /** The pod's search list is not its namespace's (dnsPolicy None or Default, dnsConfig searches). */
  readonly ownSearch?: true;
}

export interface SlimPod {
  ns: string;
  name: string;
  ips: readonly string[];
  hostNetwork?: true;
  ownSearch?: true;
}

/** A ServiceImport as the multicluster zones answer it. */
export interface ServiceImport {
  readonly name: string;
  readonly ns: string;
  /** spec.type Headless; otherwise ClusterSetIP. */
  readonly headless: boolean;
  /** spec.ips: the clusterset IPs (ClusterSetIP), canonical. */
  readonly ips: readonly string[];
  readonly ports: readonly SvcPort[];
}

/** An imported EndpointSlice: its endpoints, ports and the cluster they run in. */
export interface ClusterGroup extends EndpointGroup {
  /** multicluster.kubernetes.io/source-cluster, lowercase; "" when it is no DNS label (its endpoints
   * then count for the service's addresses but have no names of their own). */
  readonly cluster: string;
}
