// kubeadm's Corefile, as kubeadm writes it for CoreDNS since Kubernetes 1.32 (its `cache` has skipped
// the cluster domain since then; before, a bare `cache 30` also cached cluster answers). It is
// Corefile.example and deploy/base/configmap.yaml's Corefile (a test keeps the three equal), and what
// `migrate kube-dns` fills in, as kubeadm did when it moved clusters off kube-dns.

export interface StubDomain {
  domain: string;
  /** Addresses as forward takes them: IP, IP:PORT, [IPv6]:PORT. */
  servers: string[];
}

export interface KubeadmSettings {
  /** The cluster domain (kubeadm's networking.dnsDomain). */
  domain: string;
  /** forward's targets in the main block: the node's resolv.conf, or kube-dns's upstreamNameservers. */
  upstreams: string[];
  /** kube-dns's stubDomains: one block each, after the main one. */
  stubs: StubDomain[];
}

export function kubeadmCorefile(s: KubeadmSettings): string {
  const main = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${s.domain} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . ${s.upstreams.join(" ")} {
       max_concurrent 1000
    }
    cache 30 {
       disable success ${s.domain}
       disable denial ${s.domain}
    }
    loop
    reload
    loadbalance
}
`;
  // kubeadm's block for a stub domain: its own cache and loop check, everything forwarded.
  const stubs = s.stubs.map(
    (stub) => `${stub.domain}:53 {
    errors
    cache 30
    loop
    forward . ${stub.servers.join(" ")}
}
`,
  );
  return [main, ...stubs].join("\n");
}
