// The per-query series of CoreDNS's dnsserver metrics, fed by the finish hook of every server block
// that has `prometheus`. One lookup per query finds the (server, zone) entry; the label sets below it
// are few (proto x family x type, rcode x plugin), so their series are found in small maps and bumped
// as plain numbers (see plain.ts for why not prom-client's own counters).

import type { QueryDone } from "./query-done.ts";
import { PlainCounter, PlainHistogram, SIZE_BUCKETS, TIME_BUCKETS, type HistogramSeries } from "./plain.ts";
import { registry, pluginEnabled } from "./registry.ts";
import { rcodeName, typeName } from "../dns/constants.ts";

const requests = new PlainCounter(
  "coredns_dns_requests_total",
  "DNS queries received, by server block zone, transport, address family and query type.",
);
const responses = new PlainCounter(
  "coredns_dns_responses_total",
  "DNS replies sent, by rcode and by the plugin that produced them.",
);
// No type label: CoreDNS dropped it in 1.8.4 (the histogram's cardinality), though its README still
// lists it; the CoreDNS mixin's latency alert takes the 99th percentile over all types.
const duration = new PlainHistogram(
  "coredns_dns_request_duration_seconds",
  "Seconds from a query's arrival to its reply being handed to the socket.",
  TIME_BUCKETS,
);
const doRequests = new PlainCounter(
  "coredns_dns_do_requests_total",
  "DNS queries received with the DO bit (DNSSEC OK) set.",
);
const requestSize = new PlainHistogram(
  "coredns_dns_request_size_bytes",
  "Size of the queries received, in bytes.",
  SIZE_BUCKETS,
);
const responseSize = new PlainHistogram(
  "coredns_dns_response_size_bytes",
  "Size of the replies sent (after truncation), in bytes.",
  SIZE_BUCKETS,
);
for (const m of [requests, responses, duration, doRequests, requestSize, responseSize])
  registry.registerMetric(m.asMetric());

/** The query types CoreDNS labels by name; every other type counts as "other". */
const MONITORED = new Set([
  "A",
  "AAAA",
  "NS",
  "PTR",
  "SOA",
  "MX",
  "TXT",
  "SRV",
  "CNAME",
  "DS",
  "DNSKEY",
  "RRSIG",
  "NSEC",
  "NSEC3",
  "HTTPS",
  "IXFR",
  "AXFR",
  "ANY",
]);

interface Entry {
  base: { server: string; zone: string; view: string };
  /** The request count of a query type, transport and family, found by one lookup. */
  byKind: Map<number, { value: number }>;
  duration: HistogramSeries;
  /** By plugin, then by rcode. */
  responses: Map<string, Map<number, { value: number }>>;
  doRequests: { value: number };
  requestSize: { udp: HistogramSeries; tcp: HistogramSeries };
  responseSize: { udp: HistogramSeries; tcp: HistogramSeries };
}

const entries = new Map<string, Entry>();

function entryFor(server: string, zone: string, view: string): Entry {
  const key = `${server} ${zone} ${view}`;
  let e = entries.get(key);
  if (e) return e;
  const base = { server, zone, view };
  e = {
    base,
    byKind: new Map(),
    duration: duration.series(base),
    responses: new Map(),
    doRequests: doRequests.series(base),
    requestSize: {
      udp: requestSize.series({ ...base, proto: "udp" }),
      tcp: requestSize.series({ ...base, proto: "tcp" }),
    },
    responseSize: {
      udp: responseSize.series({ ...base, proto: "udp" }),
      tcp: responseSize.series({ ...base, proto: "tcp" }),
    },
  };
  entries.set(key, e);
  return e;
}

/** A finish hook for one server block: counts every query it answered. Per query it does two small-map
 * lookups on numeric keys and bumps plain numbers; label strings are built once per new series.
 * `view` gives the block's view name (`view`, set up after prometheus), "" for none. */
export function queryRecorder(view: () => string = () => ""): (q: QueryDone) => void {
  // The block's entry, looked up again only when its server label changes (bind, reload).
  let server = "";
  let zone = "";
  let e: Entry | undefined;
  return (q) => {
    if (e === undefined || q.server !== server || q.zone !== zone) {
      server = q.server;
      zone = q.zone;
      e = entryFor(server, zone, view());
    }
    const family = q.remoteAddress.includes(":") ? 2 : 1;
    // qtype (16 bits), transport and family packed into one number.
    const key = q.qtype * 4 + (q.proto === "tcp" ? 2 : 0) + family - 1;
    let k = e.byKind.get(key);
    if (!k) {
      k = newKind(e, q, family);
      e.byKind.set(key, k);
    }
    k.value++;
    e.duration.observeMicros(q.micros);
    if (q.do) e.doRequests.value++;
    let byRcode = e.responses.get(q.plugin);
    if (!byRcode) e.responses.set(q.plugin, (byRcode = new Map()));
    let s = byRcode.get(q.rcode);
    if (!s) {
      s = responses.series({ ...e.base, rcode: rcodeName(q.rcode), plugin: q.plugin });
      byRcode.set(q.rcode, s);
    }
    s.value++;
    e.requestSize[q.proto].observe(q.size);
    e.responseSize[q.proto].observe(q.rsize);
  };
}

function newKind(e: Entry, q: QueryDone, family: number): { value: number } {
  const name = typeName(q.qtype);
  const type = MONITORED.has(name) ? name : "other";
  return requests.series({ ...e.base, proto: q.proto, family: String(family), type });
}

/** CoreDNS's plugins that are no handler of its chain (a web server, a timer, a setting), which its
 * coredns_plugin_enabled leaves out; and clusterdns's nodelocal, which sets the node up. */
const NOT_HANDLERS = new Set([
  "bind",
  "debug",
  "health",
  "multisocket",
  "nodelocal",
  "on",
  "ready",
  "reload",
  "root",
  "sign",
  "timeouts",
  "tls",
]);

/** The instance whose blocks coredns_plugin_enabled shows. */
let enabledBy: unknown;

/** coredns_plugin_enabled{server, zone, view, name}: 1 for each handler of a block with prometheus, per
 * server and zone, set as its instance begins to serve (queries or not), as CoreDNS sets it at start-up.
 * A new instance (a reload) starts the set over, so a plugin taken out of the Corefile leaves it. */
export function markPluginsEnabled(
  instance: unknown,
  bases: readonly { server: string; zone: string; view: string }[],
  directives: readonly string[],
): void {
  if (instance !== enabledBy) {
    pluginEnabled.clear();
    enabledBy = instance;
  }
  for (const base of bases)
    for (const name of directives)
      if (!NOT_HANDLERS.has(name)) pluginEnabled.series({ ...base, name }).value = 1;
}
