// autopath's series, read from stats.ts at scrape time: CoreDNS's coredns_autopath_success_total and
// clusterdns_autopath_answers_total, which says how every query autopath looked at ended.

import { Counter } from "prom-client";
import { registry } from "../../metrics/registry.ts";
import { autopathServers, type AutopathStats } from "./stats.ts";

new Counter({
  name: "coredns_autopath_success_total",
  help: "Queries autopath answered with a CNAME to a name found on the client's search path.",
  labelNames: ["server"],
  registers: [registry],
  collect() {
    this.reset();
    for (const [server, s] of autopathServers) this.inc({ server }, s.cname);
  },
});

const RESULTS: [string, keyof AutopathStats][] = [
  ["cname", "cname"],
  ["nxdomain", "nxdomain"],
  ["as_asked", "plain"],
  ["lookup_failed", "failed"],
  ["unknown_client", "unknownClient"],
];

new Counter({
  name: "clusterdns_autopath_answers_total",
  help: "Queries autopath looked at, by how they ended.",
  labelNames: ["server", "result"],
  registers: [registry],
  collect() {
    this.reset();
    for (const [server, s] of autopathServers) {
      for (const [result, field] of RESULTS) this.inc({ server, result }, s[field]);
    }
  },
});
