// The Corefile used when none is given and ./Corefile does not exist: a demo that needs no cluster.
// The cluster comes from zones/demo-cluster.yaml (the `objects` source) instead of the API, and
// nothing is forwarded, so the demo never sends a packet off the machine. Paths resolve against the
// package root, so `npm start` works from any folder.

export const DEFAULT_COREFILE = `# clusterdns built-in demo: no cluster needed.
cluster.local in-addr.arpa ip6.arpa {
    errors
    log
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        objects zones/demo-cluster.yaml
        pods insecure
    }
}

example.org {
    errors
    log
    file zones/example.org.zone
}

. {
    errors
    log
    health :8080
    ready :8181
    chaos
    whoami
}
`;
