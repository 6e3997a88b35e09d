// The Corefile used when none is given and ./Corefile does not exist: a demo that needs no cluster.
// Paths resolve against the package root, so `npm start` works from any folder.

export const DEFAULT_COREFILE = `# clusterdns built-in demo: no cluster needed.
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
