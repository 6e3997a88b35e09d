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
  /** Ports on 127.0.0.1 sent a NOTIFY whenever the zone changes (secondary's tests). */
  notifyPorts?: readonly number[];
  /** Keep the zone's changes in the journal, so IXFR sends differences (default: no journal). */
  journal?: boolean;
  /** A control socket at `dir`/knot.sock, for knotc (zone-begin/set/commit). */
  control?: boolean;
  /** Serve the zone as a secondary of the primary at 127.0.0.1 on this port (transfer's NOTIFY and
   * IXFR tests): transfers from it, takes its NOTIFYs, loads no zone file. */
  primary?: number;
  /** A TSIG key that transfers and NOTIFYs must be signed with. */
  key?: { name: string; algorithm: string; secret: string };
}

/** Writes knot.conf into `dir` and returns its path. */
export function writeKnotConf(o: KnotConf): string {
  const conf = join(o.dir, "knot.conf");
  const keyLine = o.key ? `    key: ${o.key.name}\n` : "";
  const transferAcl = o.transferTo
    ? `  - id: transfer\n    address: [${o.transferTo.join(", ")}]\n    action: transfer\n${keyLine}`
    : "";
  const notifyAcl =
    o.primary !== undefined ? `  - id: notify\n    address: 127.0.0.1\n    action: notify\n${keyLine}` : "";
  const acl = transferAcl + notifyAcl === "" ? "" : `acl:\n${transferAcl}${notifyAcl}`;
  const key = o.key
    ? `key:\n  - id: ${o.key.name}\n    algorithm: ${o.key.algorithm}\n    secret: ${o.key.secret}\n`
    : "";
  const notify = o.notifyPorts ?? [];
  const remotes = notify.map((port, i) => `  - id: notify${i}\n    address: 127.0.0.1@${port}\n${keyLine}`);
  if (o.primary !== undefined)
    remotes.push(`  - id: primary\n    address: 127.0.0.1@${o.primary}\n${keyLine}`);
  const acls = [...(o.transferTo ? ["transfer"] : []), ...(o.primary !== undefined ? ["notify"] : [])];
  const remote = remotes.length > 0 ? `remote:\n${remotes.join("")}` : "";
  const control = o.control ? `control:\n    listen: "${join(o.dir, "knot.sock")}"\n` : "";
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
${control}${key}${remote}${acl}log:
  - target: stdout
    any: info
zone:
  - domain: ${o.zone}
    file: "${o.zoneFile}"
    zonefile-sync: -1
    journal-content: ${o.journal ? "changes" : "none"}
${o.primary !== undefined ? "    master: primary\n    zonefile-load: none\n" : ""}${acls.length > 0 ? `    acl: [${acls.join(", ")}]\n` : ""}${notify.length > 0 ? `    notify: [${notify.map((_, i) => `notify${i}`).join(", ")}]\n` : ""}`,
  );
  return conf;
}
