// A worker thread of -workers N (src/server/workers.ts starts it): the same Corefile set up again in
// this thread, its own pipelines and answer stores, UDP sockets of its own on the ports the main
// thread bound (SO_REUSEPORT: the kernel spreads the clients over the sockets), and its kubernetes
// stores reading the main thread's, which its one watch fills (a shared index; src/runtime/relay.ts
// brings what changed). It opens no HTTP listener and no TCP socket and watches no API: the main thread
// does those once for the process.

import { parentPort, workerData } from "node:worker_threads";
import { threadRole } from "./runtime/thread-role.ts";
import { relay, type RelayMessage } from "./runtime/relay.ts";
import { createLogger } from "./log.ts";
import { parseCorefile } from "./corefile/parser.ts";
import { plugins } from "./plugins/index.ts";
import { NOT_SUPPORTED } from "./plugins/not-supported.ts";
import { Instance } from "./server/instance.ts";
import { READY_WAIT_MS } from "./server/reloader.ts";
import { chooseUdpEngine } from "./server/udp-engine.ts";
import { workerMetricsJson } from "./metrics/registry.ts";
import { collectGarbage } from "./runtime/heap.ts";
import type { ToWorker, WorkerData } from "./server/workers.ts";
import { Panic, exitOnPanic } from "./runtime/panic.ts";

const data = workerData as WorkerData;
threadRole.index = data.index;
const port = parentPort!;
const log = createLogger().child({ worker: data.index });

const options = {
  plugins,
  notSupported: NOT_SUPPORTED,
  root: data.root,
  defaultPort: data.defaultPort,
  log,
  udpEngine: chooseUdpEngine(data.udpEngine),
};

let current: Instance | undefined;
/** Messages other than the relay's wait here while the instance is set up, then run in order. */
let work: Promise<void> = Promise.resolve();

port.on("message", (message: RelayMessage | ToWorker) => {
  // The relay's events are taken at once (held for a store not made yet), never queued behind work.
  if (message.t === "relay") relay.in.deliver(message);
  // Not queued: the start, which work holds, waits for it.
  else if (message.t === "listen") listenAt(message.ports);
  // Scrapes are answered at once, whatever the instance is doing.
  else if (message.t === "metrics") scrape(message.id);
  else work = work.then(() => handle(message)).catch((err: unknown) => fail(err));
});

async function setUp(
  config: Pick<WorkerData, "text" | "fileStamps">,
  ports: Promise<Record<string, number>>,
  previous?: Instance,
): Promise<Instance> {
  return Instance.create({
    ...options,
    blocks: parseCorefile(config.text, data.file),
    worker: { ports, fileStamps: config.fileStamps },
    shareDnsPort: true,
    takesOver: previous !== undefined,
    previous,
  });
}

/** The main thread's ports, once it listens ("listen"). */
let listenAt: (ports: Record<string, number>) => void = () => {};
const ports = new Promise<Record<string, number>>((r) => (listenAt = r));

// Set up and started at once, so the store syncs while the main thread's does; the sockets open
// once the main thread says where.
work = (async () => {
  current = await setUp(data, ports);
  // Loading and setting up the server leaves a third of this thread's heap as garbage in half-empty
  // pages, which V8 keeps while the thread idles: given back in one compacting collection, before the
  // sockets open (a kubernetes store compacts again after its sync: heap-tuning.ts).
  collectGarbage();
  await current.start();
  port.postMessage({ t: "listening" });
})().catch((err: unknown) => fail(err));

async function handle(m: ToWorker): Promise<void> {
  switch (m.t) {
    case "reload": {
      // Done, taken over or not: the main thread keeps its old store running until then.
      const done = () => port.postMessage({ t: "reloaded" });
      if (current === undefined) return done();
      try {
        const next = await setUp(m, Promise.resolve(m.ports), current);
        await next.takeOver(current, { readyWaitMs: READY_WAIT_MS });
        current = next;
        log.info({ ports: next.ports, adopted: next.adopted }, "reloaded");
      } catch (err) {
        log.error(
          { error: (err as Error).message },
          "reload: the running configuration stays in this worker",
        );
      }
      done();
      break;
    }
    case "shed":
      current?.invalidate();
      break;
    case "stop":
      await current?.stop();
      port.postMessage({ t: "stopped" });
      port.close();
      break;
  }
}

function scrape(id: number): void {
  workerMetricsJson().then(
    (json) => port.postMessage({ t: "metrics", id, json }),
    (err: unknown) => port.postMessage({ t: "metrics", id, json: [], error: String(err) }),
  );
}

function fail(err: unknown): void {
  log.fatal({ err }, "worker failed");
  port.postMessage({ t: "failed", message: (err as Error).message });
  process.exit(1);
}

process.on("uncaughtException", (err) => {
  if (err instanceof Panic) exitOnPanic(err, log);
  log.fatal({ err }, "uncaught exception: still serving");
});
process.on("unhandledRejection", (err) => log.fatal({ err }, "unhandled rejection: still serving"));
