// The plugins of CoreDNS (its plugin.cfg) that clusterdns does not have. A Corefile written for CoreDNS
// may name any of them: naming one stops start-up with a message that says so and points to the
// README's "CoreDNS compatibility" table, which says why, instead of "Unknown directive". A plugin that
// is added to the registry (index.ts) leaves this list (index.test.ts checks).

export const NOT_SUPPORTED: ReadonlySet<string> = new Set([
  // Server set-up CoreDNS does in plugins: encrypted listeners, socket and timeout tuning, debugging.
  "root",
  "tls",
  "quic",
  "multisocket",
  "cancel",
  "debug",
  "pprof",
  "trace",
  "dnstap",
  "on",
  "erratic",
  // Request metadata and what reads it.
  "metadata",
  "geoip",
  "view",
  // Answering plugins for data clusterdns does not keep.
  "local",
  "dns64",
  "route53",
  "azure",
  "clouddns",
  "etcd",
  "nomad",
  "grpc",
  "auto",
  "secondary",
  // DNSSEC and signed transactions.
  "dnssec",
  "sign",
  "tsig",
]);
