// The one knotd configuration of the tests and the benchmark: one zone from a file, workers as few as
// asked (one process on one core, like one clusterdns), everything it writes in `dir`, no journal and
// no write-back of the zone file, log lines on stdout (callers wait for "[ZONE] loaded").

import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface KnotConf {
  /** A temporary folder for the configuration, rundir and database. */
  dir: string;
  address: string;
  port: number;
  /** The zone's name, absolute or not. */
  zone: string;
  zoneFile: string;
  udpWorkers?: number;
  /** Addresses or prefixes allowed to transfer the zone (none by default). */
  transferTo?: readonly string[];
}

/** Writes knot.conf into `dir` and returns its path. */
export function writeKnotConf(o: KnotConf): string {
  const conf = join(o.dir, "knot.conf");
  const acl = o.transferTo
    ? `acl:\n  - id: transfer\n    address: [${o.transferTo.join(", ")}]\n    action: transfer\n`
    : "";
  writeFileSync(
    conf,
    `server:
    listen: ${o.address}@${o.port}
    rundir: "${o.dir}"
    udp-workers: ${o.udpWorkers ?? 1}
    tcp-workers: 1
    background-workers: 1
database:
    storage: "${o.dir}"
${acl}log:
  - target: stdout
    any: info
zone:
  - domain: ${o.zone}
    file: "${o.zoneFile}"
    zonefile-sync: -1
    journal-content: none
${o.transferTo ? "    acl: transfer\n" : ""}`,
  );
  return conf;
}
