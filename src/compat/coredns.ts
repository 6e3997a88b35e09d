// What clusterdns does with each plugin of CoreDNS: the one source of docs/compatibility.md's tables
// (rendered by compat/render.ts; a test keeps the file equal to the rendering), of the start-up error
// for a plugin clusterdns does not have (plugins/not-supported.ts), and of `clusterdns migrate
// coredns`, which applies it line by line to an operator's Corefile.

/** How clusterdns serves what a line asks for, compared with CoreDNS. */
export type Verdict = "same" | "differs" | "missing";

/** An option or argument whose use gives its line a verdict of its own. */
export interface PartCompat {
  /** An option of the plugin's block, by name. */
  option?: string;
  /** Arguments, on the directive's line or on an option's, that match. */
  args?: RegExp;
  /** How the part is named in the docs. */
  what: string;
  verdict: Verdict;
  note: string;
  /** A Corefile that uses it: the tests set it up (`missing` must be refused at its line). */
  example: string;
}

export interface PluginCompat {
  /** The name in CoreDNS's plugin.cfg. */
  plugin: string;
  /** What clusterdns takes, for the docs. */
  options: string;
  verdict: Verdict;
  /** Why it is missing, how it differs, or what to know when it is the same. */
  note: string;
  parts?: PartCompat[];
  /** What CoreDNS does with a second line of the plugin in one server block: refuses it ("this plugin
   * can only be used once per Server Block", its setup's ErrOnce), or, for forward, never reaches a line
   * whose FROM an earlier one already takes. clusterdns refuses both at the second line. */
  twice?: "refused" | "shadowed";
  /** With "shadowed": options of the earlier line that let a query on to the next (`except`, `next`). */
  passesOn?: string[];
}

/** A plugin CoreDNS once had and has removed: a Corefile from before still names it. */
export interface RemovedPlugin {
  plugin: string;
  /** The CoreDNS release that dropped it. */
  removedIn: string;
  /** What to write instead. */
  instead: string;
}

const missing = (plugin: string, note: string, once = false): PluginCompat => ({
  plugin,
  options: "",
  verdict: "missing",
  note,
  ...(once ? { twice: "refused" as const } : {}),
});

/** Every plugin of CoreDNS's plugin.cfg, in its order. */
export const COREDNS_PLUGINS: readonly PluginCompat[] = [
  {
    plugin: "root",
    options: "PATH",
    verdict: "differs",
    note: "without it, relative paths are read from the Corefile's folder (CoreDNS: the working folder), and a relative PATH is too; a second `root` line in a block is refused rather than replacing the first",
  },
  {
    plugin: "metadata",
    options: "ZONES",
    verdict: "same",
    note: "labels published: kubernetes's (but `client-label/*`, `cluster` and `zone`), geoip's and `view/name`; a value is worked out when log, rewrite, template or view reads it",
    twice: "refused",
  },
  {
    plugin: "geoip",
    options: "DBFILE, `edns-subnet`",
    verdict: "same",
    note: "City, Country and Enterprise databases give the city labels, ASN and ISP databases the asn ones, as CoreDNS reads them; a label's value is looked up when log, rewrite, template or view reads it",
    twice: "refused",
  },
  {
    plugin: "cancel",
    options: "TIMEOUT",
    verdict: "differs",
    note: "past the deadline the client gets SERVFAIL from cancel itself, whichever plugin is still at work, and forward stops waiting at once (CoreDNS's forward first finishes the attempt in flight, up to its 2 s read timeout); internal lookups (ExternalName targets, autopath) inherit the deadline",
  },
  {
    plugin: "tls",
    options: "CERT KEY [CA], `client_auth`, `keylog`",
    verdict: "same",
    note: "the certificate of `tls://` (DNS over TLS) and `https://` (DNS over HTTPS, HTTP/2 and HTTP/1.1) and `grpc://` (CoreDNS's DnsService over HTTP/2, ALPN h2) blocks; TLS 1.2 at least; a `grpc://` block without `tls` serves cleartext HTTP/2 as CoreDNS; beyond CoreDNS, the reply to a query that carries an EDNS Padding option is padded to a multiple of 468 octets (RFC 7830, RFC 8467) over these encrypted blocks; `quic://` blocks are refused (see the tls plugin's README)",
    twice: "refused",
    parts: [
      {
        option: "acme",
        what: "certificates from ACME (`tls { acme ... }`)",
        verdict: "missing",
        note: "give CERT KEY files (cert-manager can write them into a Secret)",
        example: "tls://. {\n    tls {\n        acme dns.example.org\n    }\n    whoami\n}\n",
      },
    ],
  },
  missing("quic", "no DNS-over-QUIC listener: Node 24 is built without QUIC (`node:quic` is not there)"),
  {
    plugin: "timeouts",
    options: "`read`, `write`, `idle`",
    verdict: "same",
    note: "for the TCP, DNS-over-TLS and DNS-over-HTTPS listeners (no DoQ here); blocks sharing a port get the longest each sets",
  },
  {
    plugin: "multisocket",
    options: "NUM_SOCKETS",
    verdict: "differs",
    note: "one answering thread per socket (`-workers`), each with a socket of its own on every DNS port; the threads are the process's, so the largest count in the Corefile runs; without a number, the cgroup's CPU quota; TCP stays on one socket",
    twice: "refused",
  },
  {
    plugin: "reload",
    options: "INTERVAL, JITTER",
    verdict: "same",
    note: "the interval compares the files the Corefile imports as well as the Corefile (CoreDNS hashes the Corefile alone), so an edited imported file, such as AKS's `custom/*.override`, is applied too; SIGUSR1 reloads whether or not anything changed, as CoreDNS's",
  },
  { plugin: "nsid", options: "DATA", verdict: "same", note: "", twice: "refused" },
  {
    plugin: "bufsize",
    options: "SIZE",
    verdict: "differs",
    note: "UDP replies never exceed 1232 octets anyway, so only a smaller SIZE changes anything; forward still offers its upstreams 1232 and the limit applies to the reply to the client",
  },
  { plugin: "bind", options: "ADDRESS, IFACE, `except`", verdict: "same", note: "" },
  {
    plugin: "nodelocal",
    options: "INTERFACE, `rules`, `check`, `handover`, `keep`",
    verdict: "differs",
    note: "not a plugin of CoreDNS: node-cache (NodeLocal DNSCache) sets the node up with flags (`-localip`, `-setupinterface`, `-setupiptables`); here a directive does, from the block's `bind` ([node-local.md](node-local.md))",
  },
  {
    plugin: "rrl",
    options:
      "ZONES, `window`, `ipv4-prefix-length`, `ipv6-prefix-length`, `*-per-second`, `slip-ratio`, `max-table-size`, `report-only`",
    verdict: "differs",
    note: "an external plugin in CoreDNS; replays from the answer cache are limited too; with `-workers N` (or `multisocket`) every thread charges one set of accounts, and a reload that keeps the settings keeps them",
    parts: [
      {
        option: "requests-per-second",
        what: "`requests-per-second`",
        verdict: "missing",
        note: "clusterdns limits responses only",
        example: ". {\n    rrl . {\n        requests-per-second 100\n    }\n}\n",
      },
    ],
  },
  {
    plugin: "debug",
    options: "",
    verdict: "differs",
    note: "logs at debug level (process-wide, as in CoreDNS) with hex dumps of forwarded replies that fail the checks; an exception a plugin did not mean to throw (anything but a PluginError, the counterpart of a Go panic) ends the process with status 2 instead of a SERVFAIL, `errors` in the block or not; in the blocks that have `debug`, where CoreDNS turns recovery off for every block on the listener; a worker thread of `-workers N` that hits one ends and is started again",
  },
  {
    plugin: "trace",
    options:
      "ENDPOINT-TYPE (`zipkin`, `otlp`), ENDPOINT, `every`, `service`, `client_server`, `zipkin_max_backlog_size`, `zipkin_max_batch_size`, `zipkin_max_batch_interval`",
    verdict: "differs",
    note: "OpenTelemetry spans (CoreDNS: OpenTracing) with CoreDNS's names and tags, sent to Zipkin (v2 JSON) or, clusterdns's addition, `otlp` (OTLP/HTTP JSON); a sampled query takes the plugin chain even when its reply is stored, so its spans are real ([trace](../src/plugins/trace/README.md))",
    twice: "refused",
    parts: [
      {
        args: /^datadog\s/i,
        what: "ENDPOINT-TYPE `datadog`",
        verdict: "missing",
        note: "the Datadog Agent's trace port speaks Datadog's own protocol; `otlp` to the Agent's OTLP intake instead",
        example: ". {\n    trace datadog localhost:8126\n}\n",
      },
      {
        option: "datadog_analytics_rate",
        what: "`datadog_analytics_rate`",
        verdict: "missing",
        note: "an option of the `datadog` endpoint type",
        example: ". {\n    trace {\n        datadog_analytics_rate 0.5\n    }\n}\n",
      },
      {
        option: "client_server",
        what: "`client_server`",
        verdict: "differs",
        note: "accepted with a warning: OpenTelemetry has no shared client/server spans",
        example: ". {\n    trace {\n        client_server\n    }\n}\n",
      },
    ],
  },
  { plugin: "ready", options: "ADDRESS, `monitor`", verdict: "same", note: "", twice: "refused" },
  { plugin: "health", options: "ADDRESS, `lameduck`", verdict: "same", note: "" },
  missing("pprof", "Go's profiler; Node has `--cpu-prof` and `--inspect`", true),
  {
    plugin: "prometheus",
    options: "ADDRESS",
    verdict: "same",
    note:
      "CoreDNS's series names and labels, those of 1.11 and later (`coredns_proxy_*` for forward, " +
      "`coredns_dns_do_requests_total`, no `type` on `coredns_dns_request_duration_seconds`) and forward's older " +
      "`coredns_forward_*` too",
    twice: "refused",
  },
  {
    plugin: "insights",
    options: "`listen`, `token`, `kubeconfig`, `endpoint`, `cluster_domain`, `workloads`, `top`",
    verdict: "differs",
    note: "not a plugin of CoreDNS: queries by the workload that sent them, search-list walks and their fixes, as a page, a JSON API and `clusterdns top` ([insights.md](insights.md))",
  },
  {
    plugin: "errors",
    options: "`stdout`, `consolidate`, `stacktrace`",
    verdict: "same",
    note: "",
    twice: "refused",
  },
  {
    plugin: "log",
    options: "NAMES, FORMAT, `class`",
    verdict: "same",
    note: "",
  },
  {
    plugin: "dnstap",
    options:
      "SOCKET (a path, `unix://`, `tcp://`, `tls://`), `full`, WRITEBUFFER, QUEUE, `identity`, `version`, `extra`, `skipverify`, `message_types`",
    verdict: "same",
    note: "client messages for every answered query (replayed ones too) and forwarder messages for every try upstream; a query left unanswered (acl's `drop`) sends none",
    parts: [
      {
        option: "extra",
        args: /\{(?!\/)[^{}\s]*\}|\{\/[^{}\s/]*\}/,
        what: "placeholders in `extra` other than metadata's `{/LABEL}`",
        verdict: "missing",
        note: "metadata placeholders (`{/kubernetes/client-namespace}` and the like) are filled per message; CoreDNS's other replacer placeholders (`{type}`, `{name}`, ...) are refused at start-up",
        example: '. {\n    dnstap /tmp/dnstap.sock {\n        extra "{type}"\n    }\n}\n',
      },
    ],
  },
  {
    plugin: "local",
    options: "`localhost_prefix`",
    verdict: "differs",
    note: "also answers the PTR of ::1 (`1.0.0...0.ip6.arpa.`, `localhost.`), which CoreDNS passes on; queries of class CH pass on",
  },
  {
    plugin: "dns64",
    options: "PREFIX, `prefix`, `translate_all`, `allow_ipv4`",
    verdict: "differs",
    note: "RFC 6147's rules where CoreDNS skips them: an IPv4-mapped AAAA counts as none (5.1.4), a query with DO and CD set is not translated (5.5), and when the name has no A either the AAAA reply goes back as it was, with its SOA; a prefix whose bits 64-71 are not zero is refused (RFC 6052 2.2); a second `dns64` line in a block is refused rather than replacing the first. In a block that takes IPv4 and IPv6 clients without `allow_ipv4`, the answer cache keeps the two families' AAAA replies apart",
  },
  {
    plugin: "acl",
    options: "ZONES, `allow`, `block`, `filter`, `drop`, `type`, `net`",
    verdict: "same",
    note: "where a policy with `net` decides a question, its replies are not kept in the answer cache (clients see the same answers)",
  },
  { plugin: "any", options: "", verdict: "same", note: "" },
  { plugin: "chaos", options: "VERSION, AUTHORS", verdict: "same", note: "" },
  {
    plugin: "loadbalance",
    options: "`round_robin`, `weighted`, `reload`, `prefer`, `limit_answers`",
    verdict: "differs",
    note: "a cached reply may be replayed in the same order for up to 1 s before it is rotated again",
  },
  {
    plugin: "tsig",
    options: "ZONE, `secret`, `secrets`, `require`",
    verdict: "same",
    note: "any HMAC of RFC 8945 (MD5, SHA-1, SHA-224/256/384/512); replies signed, a transfer's every message too; *secondary* signs its queries to the primaries with the block's first key (hmac-sha256), which CoreDNS's does not",
    twice: "refused",
  },
  {
    plugin: "cache",
    options: "every option",
    verdict: "differs",
    note: "replies live in the answer cache as wire bytes; a reply served from it keeps the AA bit it came with (CoreDNS sets AA on every reply from its cache, for stub resolvers that drop non-authoritative ones); as in CoreDNS, no failure of a plugin's own (forward reached no upstream) is kept; an NXDOMAIN that *kubernetes* or *k8s_external* computes is kept from its second asking (its first is answered with the TTLs cache gives it, and counted as a miss), so random names do not evict what is asked again",
    twice: "refused",
  },
  {
    plugin: "rewrite",
    options: "`name`, `type`, `class`, `ttl`, `edns0`, `cname`, `rcode`, `answer`",
    verdict: "same",
    note: "",
  },
  {
    plugin: "header",
    options: "`query`, `response`, `set`, `clear`",
    verdict: "same",
    note: "",
    parts: [
      {
        args: /(^|\s)(rd|cd)(\s|$)/,
        what: "`rd` or `cd` in replies",
        verdict: "differs",
        note: "a reply's rd and cd always echo the query's (accepted with a warning)",
        example: ". {\n    header {\n        response set rd\n    }\n    whoami\n}\n",
      },
    ],
  },
  {
    plugin: "dnssec",
    options: "ZONES, `key file`, `cache_capacity`",
    verdict: "differs",
    note: "RSASHA256, ECDSAP256SHA256, ECDSAP384SHA384 and ED25519 keys from BIND key files; a NODATA's NSEC lists the types the name holds (CoreDNS: a fixed list without the type asked), a denial at the end of a CNAME chain is proven for the chain's target, a referral without DS records proves their absence with an NSEC at the delegation point holding NS, RRSIG and NSEC (CoreDNS: at the name asked, with a fixed list of types), and forwarded replies are never signed; a second `dnssec` line in a block is refused rather than replacing the first",
    twice: "refused",
    parts: [
      {
        option: "key",
        args: /(^|\s)(secret|aws_secretsmanager)(\s|$)/,
        what: "`key secret` (AWS Secrets Manager)",
        verdict: "missing",
        note: "keys are read from files only: no AWS Secrets Manager client here",
        example:
          "example.org {\n    dnssec {\n        key secret Kexample.org.+013+45330\n    }\n    whoami\n}\n",
      },
    ],
  },
  {
    plugin: "autopath",
    options: "ZONES, RESOLV-CONF, `@kubernetes`",
    verdict: "differs",
    note: "a pod with `dnsConfig.searches` or `dnsPolicy: None`/`Default` gets no walk (CoreDNS walks its namespace's list, which skips the pod's own domains); a RESOLV-CONF whose first search domain is `.` has it skipped, as glibc reads it",
  },
  { plugin: "minimal", options: "", verdict: "same", note: "" },
  {
    plugin: "template",
    options: "every option",
    verdict: "same",
    note: "`upstream` is accepted with a warning, a no-op as in CoreDNS",
  },
  {
    plugin: "transfer",
    options: "ZONES, `to`",
    verdict: "differs",
    note: "AXFR and IXFR of the *kubernetes*, *file*, *auto* and *secondary* zones; IXFR from a journal of the last 32 changes for *file* and *auto* zones (CoreDNS keeps none and sends the whole zone), the whole zone for *kubernetes* and *secondary* ones; NOTIFY to every address `to` names (port 53 unless given) when a zone's serial changes, at most once per zone every 5 s, sent again until answered (5 times at most, RFC 1996); a `to` line may end in `key NAME`, one of the block's *tsig* secrets, which signs the NOTIFYs to its addresses (an addition: CoreDNS signs no NOTIFY and refuses the word)",
  },
  {
    plugin: "hosts",
    options: "every option",
    verdict: "differs",
    note: "a name of its zones it has no entry for, without `fallthrough`, is NXDOMAIN (CoreDNS: SERVFAIL, for want of a SOA to send with an NXDOMAIN)",
    twice: "refused",
  },
  missing(
    "route53",
    "no cloud DNS backends: Route 53 can be tested only against AWS itself (AWS ships no local Route 53, and no stand-in is packaged for Debian or npm)",
  ),
  missing(
    "azure",
    "no cloud DNS backends: Azure DNS has no local emulator to test one against (Microsoft's Azurite serves Storage only)",
  ),
  missing(
    "clouddns",
    "no cloud DNS backends: Google Cloud DNS has no local emulator to test one against (gcloud's emulators serve Pub/Sub, Datastore, Firestore, Bigtable and Spanner)",
  ),
  {
    plugin: "k8s_external",
    options: "ZONES, `apex`, `ttl`, `headless`, `fallthrough`",
    verdict: "same",
    note: "",
  },
  {
    plugin: "kubernetes",
    options: "see its README",
    verdict: "differs",
    note: "wildcard queries are not answered, as in CoreDNS since 1.9; an ANY question is answered with the name's address and SRV records (RFC 8482 lets a server choose), where CoreDNS answers NODATA; an SRV question for an ExternalName Service gets its CNAME (CoreDNS: an SRV record of port 0 naming the target); an ExternalName whose target in the server's own zones does not exist is NXDOMAIN with the CNAME and the SOA (CoreDNS: NODATA)",
    twice: "refused",
    parts: [
      {
        option: "resyncperiod",
        what: "`resyncperiod`",
        verdict: "missing",
        note: "deprecated in CoreDNS 1.5.0, removed in 1.7.0: delete the line (the watch keeps the data current; there is no periodic resync)",
        example: "cluster.local {\n    kubernetes cluster.local {\n        resyncperiod 30s\n    }\n}\n",
      },
      {
        option: "upstream",
        what: "`upstream`",
        verdict: "missing",
        note: "removed in CoreDNS 1.7.0: delete the line (ExternalName targets resolve through the server itself)",
        example: "cluster.local {\n    kubernetes cluster.local {\n        upstream\n    }\n}\n",
      },
      {
        option: "federation",
        what: "`federation`",
        verdict: "missing",
        note: "moved to the federation plugin in CoreDNS 0.11, which 1.7.0 removed: kube-dns federations are gone; delete the line",
        example:
          "cluster.local {\n    kubernetes cluster.local {\n        federation prod prod.example.com\n    }\n}\n",
      },
      {
        option: "zonal",
        what: "`zonal`",
        verdict: "differs",
        note: "the parents of the zonal names (`pin._zone`, `prefer._zone`, `_zone`) answer NODATA, as names with names below them do (RFC 8020), where CoreDNS answers NXDOMAIN",
        example: "cluster.local {\n    kubernetes cluster.local {\n        zonal\n    }\n}\n",
      },
      {
        option: "multicluster",
        what: "`multicluster`",
        verdict: "differs",
        note: "a zone transfer of the multicluster zone names a headless import's endpoints below their cluster, as its answers do (CoreDNS leaves the cluster label out of transfers only)",
        example:
          "cluster.local clusterset.local {\n    kubernetes cluster.local clusterset.local {\n        multicluster clusterset.local\n    }\n}\n",
      },
    ],
  },
  {
    plugin: "file",
    options: "DBFILE, ZONES, `reload`, `reload_by_mtime`, `fallthrough`, `upstream`",
    verdict: "differs",
    note: "a signed zone's DNSSEC records go to DO=1 queries with the NSEC proofs RFC 4035 asks (NSEC3 zones are not read); `upstream` is accepted with a warning, a no-op as in CoreDNS; a changed file is read again whatever its SOA serial (CoreDNS: only on a new serial unless `reload_by_mtime`), with a warning when the serial did not move; a record with no TTL and no `$TTL` before it takes the SOA's MINIMUM (Knot: 3600)",
  },
  {
    plugin: "auto",
    options: "ZONES, `directory`, `reload`, `upstream`",
    verdict: "same",
    note: "REGEXP in JavaScript syntax, which takes RE2's patterns but for RE2's own extensions; a file that does not parse, or changed without a new serial, is logged; `upstream` is accepted with a warning, a no-op as in CoreDNS",
  },
  {
    plugin: "secondary",
    options: "ZONES, `transfer from`, `upstream`",
    verdict: "differs",
    note: "IXFR as well as AXFR; a NOTIFY from an address that is no primary is REFUSED (CoreDNS sends no reply); `transfer from` is required (CoreDNS takes a stanza without it and never serves the zone); the first transfer is retried after 1, 2, 4, 8 s, then every 10 s (CoreDNS: every 10 s); `upstream` is accepted with a warning, a no-op as in CoreDNS",
  },
  {
    plugin: "etcd",
    options: "ZONES (names and CIDRs), every option",
    verdict: "differs",
    note: "reads etcd per query through etcd's JSON gateway at /v3/ (etcd 3.4 or newer; the /v3alpha and /v3beta paths of 3.2 and 3.3 are not tried); endpoints are tried in order rather than balanced; `upstream`, `stubzones` and `debug` are accepted with a warning, no-ops as in CoreDNS",
  },
  missing(
    "nomad",
    "no Nomad backend: no Nomad agent to test one against installs here (Debian has no nomad package, and Nomad is under the BUSL from 1.7 on)",
  ),
  {
    plugin: "loop",
    options: "",
    verdict: "differs",
    note: "it probes once at start-up, so a loop that a reload brings in goes unnoticed",
    twice: "refused",
  },
  {
    plugin: "forward",
    options: "every option but `resolver`",
    verdict: "differs",
    note: "`dns://`, `tls://` and `https://` upstreams (DoH over HTTP/2 only; CoreDNS's client also falls back to HTTP/1.1), as CoreDNS; the client's own EDNS options (a cookie, padding, a client subnet) are not passed upstream, where CoreDNS relays the client's message as it is (*rewrite*'s `edns0` rules still add a subnet or a local option); queries to `tls://` and `https://` upstreams are padded to a multiple of 128 octets (RFC 8467)",
    twice: "shadowed",
    passesOn: ["except", "next", "next_on_nodata"],
    parts: [
      {
        option: "resolver",
        what: "hostnames in TO and `resolver`",
        verdict: "missing",
        note: "TO must be an IP address or a resolv.conf file; hostnames are not resolved",
        example: ". {\n    forward . 192.0.2.1 {\n        resolver 192.0.2.53\n    }\n}\n",
      },
    ],
  },
  {
    plugin: "grpc",
    options: "FROM, TO (IP, IP:PORT, `grpc://`, `unix://`, a resolv.conf), every option",
    verdict: "differs",
    note: "a reply that is not the query's (ID, question) is dropped and the next upstream tried, SERVFAIL when none answers (CoreDNS answers FORMERR); one try waits at most 2 s, so a silent upstream leaves the next its turn (CoreDNS gives the first the whole 5 s), and upstreams that failed lately are tried last; `coredns_grpc_requests_total` counts every call (CoreDNS counts the calls that got a reply); hostnames in TO are refused, as CoreDNS",
    twice: "refused",
  },
  {
    plugin: "erratic",
    options: "`drop`, `truncate`, `delay`, `large`",
    verdict: "differs",
    note: "`truncate N` truncates one reply in N as documented (CoreDNS tests the count with a bitwise AND: `truncate 3` hits one in 4); `drop` without AMOUNT beside `delay` or `truncate` keeps dropping one in 2 (CoreDNS then drops nothing); its replies are never cached, not even by a `cache` in the block, so every query meets its faults; a delay ends at `cancel`'s deadline",
  },
  { plugin: "whoami", options: "", verdict: "same", note: "" },
  {
    plugin: "on",
    options: "EVENT (`startup`, `shutdown`), COMMAND, `&`",
    verdict: "differs",
    note: "the command's output is logged line by line (CoreDNS passes it to its own stdout and stderr); `certrenew`, which CoreDNS accepts and never fires, is accepted with a warning; with `-workers N` the main thread alone runs the commands",
  },
  {
    plugin: "sign",
    options: "DBFILE, ZONES, `key file`, `key directory`, `directory`",
    verdict: "differs",
    note: "NSEC TTL min(SOA TTL, MINIMUM) (CoreDNS: MINIMUM); glue and a delegation's NS are not signed (CoreDNS signs them); no CDS/CDNSKEY records; `key directory`, unimplemented in CoreDNS, works; the block's `file` waits for a signed file not yet written instead of retrying every minute",
  },
  {
    plugin: "view",
    options: "NAME, `expr`",
    verdict: "same",
    note: "expressions are the subset of expr-lang that CoreDNS's README uses, checked at start-up; each view's replies are kept apart in the answer cache",
    twice: "refused",
  },
];

/** Plugins CoreDNS removed (from its release notes); each is refused at its line with what replaces it. */
export const REMOVED_PLUGINS: readonly RemovedPlugin[] = [
  {
    plugin: "proxy",
    removedIn: "1.5.0",
    instead:
      "use forward, which takes the same FROM TO... line (`policy`, `health_check` and `except` too; `protocol` has no equivalent)",
  },
  {
    plugin: "federation",
    removedIn: "1.7.0",
    instead: "kube-dns federations are gone from CoreDNS and clusterdns; delete the line",
  },
  {
    plugin: "reverse",
    removedIn: "1.1.4",
    instead: "answer PTR queries from the kubernetes plugin, or synthesize them with template",
  },
  { plugin: "httpproxy", removedIn: "0.0.5", instead: "use forward" },
];

/** The plugins of CoreDNS that clusterdns does not have. */
export const MISSING_PLUGINS: ReadonlySet<string> = new Set(
  COREDNS_PLUGINS.filter((p) => p.verdict === "missing").map((p) => p.plugin),
);

/** A plugin CoreDNS removed, by name. */
export function removedPlugin(name: string): RemovedPlugin | undefined {
  return REMOVED_PLUGINS.find((p) => p.plugin === name);
}

/** The row of a plugin, by name. */
export function pluginCompat(name: string): PluginCompat | undefined {
  return COREDNS_PLUGINS.find((p) => p.plugin === name);
}

/** The parts a line of a plugin uses: `words` is the directive's line (its name first) or, with
 * `option`, a line of its block. An option is the first word of a block line, or the directive's
 * first argument (rewrite's rules). */
export function partsFor(p: PluginCompat, words: readonly string[], inBlock: boolean): PartCompat[] {
  const args = inBlock ? words : words.slice(1);
  const rest = args.join(" ");
  return (p.parts ?? []).filter(
    (part) =>
      (part.option === undefined || part.option === args[0]) &&
      (part.args === undefined || part.args.test(rest)),
  );
}
