// Knot DNS (Debian's knotd) serving one zone file on loopback: the reference server of the benchmark,
// with one UDP worker so that it, like one clusterdns process, uses one core.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPinned, type Started } from "./processes.ts";
import { writeKnotConf } from "../test/upstream/knot-conf.ts";

export async function startKnot(
  zone: string,
  zoneFile: string,
  port: number,
  udpWorkers = 1,
): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-knot-"));
  const conf = writeKnotConf({ dir, address: "127.0.0.1", port, zone, zoneFile, udpWorkers });
  return startPinned("knotd", ["-c", conf], new RegExp(`\\[${zone.replaceAll(".", "\\.")}\\.\\] loaded`));
}
