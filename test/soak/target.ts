// The server the fuzz and amplification parts attack: clusterdns on kubeadm's Corefile (kubernetes
// with the demo cluster from its `objects` file, forward to a real upstream, cache, loadbalance,
// prometheus), plus `chaos` and a `file` zone, on one UDP engine. The upstream is Knot DNS on
// loopback serving example.org (with RRsets of 40 and 120 addresses); the file zone is the demo
// example.org zone served as example.net (its big.example.net holds 40 addresses). clusterdns runs
// with the node flags and environment of its container image.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { UdpEngineName } from "../../src/cli-flags.ts";
import { startServer, ROOT, type RunningServer } from "../helpers/server.ts";
import { engineArgs } from "../helpers/engines.ts";
import { freePort } from "../helpers/free-port.ts";
import { startKnot, type Knot } from "../upstream/knot.ts";
import { IMAGE_ENV, NODE_FLAGS } from "../../bench/processes.ts";

export interface Target {
  srv: RunningServer;
  knot: Knot;
  port: number;
  metricsPort: number;
  stop(): Promise<number | null>;
}

/** `extra`: more lines for the `.` block; `nofile`: the server's open-file limit. */
export async function startTarget(engine: UdpEngineName, extra = "", nofile?: number): Promise<Target> {
  const knot = await startKnot();
  const metricsPort = await freePort();
  const zone = readFileSync(join(ROOT, "zones", "example.org.zone"), "utf8").replaceAll(
    "example.org",
    "example.net",
  );
  const corefile = `. {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        objects ${ROOT}/zones/demo-cluster.yaml
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 127.0.0.1:${metricsPort}
    forward . 127.0.0.1:${knot.port} {
        max_concurrent 1000
    }
    cache 30 {
        disable success cluster.local
        disable denial cluster.local
    }
    loadbalance
    chaos
    ${extra}
}
example.net {
    errors
    file example.net.zone
}
`;
  let srv: RunningServer;
  try {
    // As the image runs it (Dockerfile): its node flags and environment, so memory is what ships.
    srv = await startServer(corefile, {
      args: engineArgs(engine),
      files: { "example.net.zone": zone },
      nofile,
      env: {
        ...IMAGE_ENV,
        NODE_OPTIONS: [...NODE_FLAGS, process.env.SOAK_NODE_OPTIONS ?? ""].join(" ").trim(),
      },
    });
  } catch (err) {
    await knot.stop();
    throw err;
  }
  return {
    srv,
    knot,
    port: srv.port,
    metricsPort,
    async stop() {
      const code = await srv.stop();
      await knot.stop();
      return code;
    },
  };
}
