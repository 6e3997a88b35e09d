// clusterdns set up in this process on a generated cluster (from an `objects` file of it, with one of
// the benchmark's Corefiles), for the benches that drive its pipeline without a socket in between.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateCluster, type Cluster } from "./cluster-gen.ts";
import { benchCorefile, type BenchCorefile } from "./cluster-api.ts";
import { NO_UPSTREAM } from "./clusterdns-run.ts";
import { readyInstance } from "../test/helpers/instance.ts";
import type { Instance } from "../src/server/instance.ts";
import { encode } from "../src/dns/encode.ts";
import { newQuery } from "../src/dns/message.ts";
import { typeFromName } from "../src/dns/constants.ts";
import type { Peer, Pipeline } from "../src/server/pipeline.ts";

export interface InProcess {
  cluster: Cluster;
  inst: Instance;
  pipeline: Pipeline;
  peer: Peer;
}

/** An instance serving a cluster of `services` with Corefile `which`, started and ready. */
export async function startInProcess(services: number, which: BenchCorefile): Promise<InProcess> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-inproc-"));
  const cluster = generateCluster({ services });
  const objects = join(dir, "objects.json");
  writeFileSync(objects, JSON.stringify({ kind: "List", items: cluster.objects }));
  const corefile = benchCorefile(which, "", NO_UPSTREAM, `objects ${objects}`);
  const inst = await readyInstance(corefile, dir);
  return { cluster, inst, pipeline: inst.pipelines[0], peer: LOOPBACK_PEER };
}

/** The client the in-process benches answer: one UDP client on loopback. */
export const LOOPBACK_PEER: Peer = {
  proto: "udp",
  remoteAddress: "127.0.0.1",
  remotePort: 40000,
  localAddress: "127.0.0.1",
  localPort: 53,
};

/** dnsperf lines ("name type") as query packets, IDs counting up. */
export function queryPackets(lines: readonly string[]): Buffer[] {
  return lines.map((line, i) => {
    const [name, type] = line.split(" ");
    return encode(newQuery(`${name}.`, typeFromName(type)!, 1, i & 0xffff));
  });
}
