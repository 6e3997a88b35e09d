// Knot DNS (Debian's knotd) serving one zone file on loopback: the reference server of the benchmark,
// with one UDP worker so that it, like one clusterdns process, uses one core.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPinned, type Started } from "./processes.ts";

export async function startKnot(
  zone: string,
  zoneFile: string,
  port: number,
  udpWorkers = 1,
): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-knot-"));
  const conf = join(dir, "knot.conf");
  writeFileSync(
    conf,
    `server:
    listen: 127.0.0.1@${port}
    udp-workers: ${udpWorkers}
    tcp-workers: 1
    background-workers: 1
    rundir: "${dir}"
database:
    storage: "${dir}"
log:
  - target: stdout
    any: info
zone:
  - domain: ${zone}
    file: "${zoneFile}"
    zonefile-sync: -1
    journal-content: none
`,
  );
  return startPinned("knotd", ["-c", conf], new RegExp(`\\[${zone.replaceAll(".", "\\.")}\\.\\] loaded`));
}
