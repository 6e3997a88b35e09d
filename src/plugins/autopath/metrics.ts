// autopath's series, read from stats.ts at scrape time: CoreDNS's coredns_autopath_success_total,
// clusterdns_autopath_answers_total (how every query autopath looked at ended) and
// clusterdns_search_expansions_total (names known pods' resolvers made from their search lists).

import { scrapedCounter } from "../../metrics/registry.ts";
import { autopathServers, type AutopathStats } from "./stats.ts";

scrapedCounter(
  "coredns_autopath_success_total",
  "Queries autopath answered from a name found on the client's search path (a CNAME to it, or its NODATA).",
  ["server"],
  (c) => {
    for (const [server, s] of autopathServers) c.inc({ server }, s.cname);
  },
);

const RESULTS: [string, keyof AutopathStats][] = [
  ["cname", "cname"],
  ["nxdomain", "nxdomain"],
  ["as_asked", "plain"],
  ["lookup_failed", "failed"],
  ["unknown_client", "unknownClient"],
];

scrapedCounter(
  "clusterdns_autopath_answers_total",
  "Queries autopath looked at, by how they ended.",
  ["server", "result"],
  (c) => {
    for (const [server, s] of autopathServers) {
      for (const [result, field] of RESULTS) c.inc({ server, result }, s[field]);
    }
  },
);

scrapedCounter(
  "clusterdns_search_expansions_total",
  "Queries from known pods for a name below one of their search domains, by whether they ended NXDOMAIN.",
  ["server", "result"],
  (c) => {
    for (const [server, s] of autopathServers) {
      c.inc({ server, result: "answered" }, s.expansions - s.expansionsNxdomain);
      c.inc({ server, result: "nxdomain" }, s.expansionsNxdomain);
    }
  },
);
