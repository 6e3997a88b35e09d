// One side of bench/packages.ts's list/watch comparison, in a process of its own so that its memory is
// its own: @kubernetes/client-node's informers, or clusterdns's reflectors (reflector.ts over
// http-client.ts), list and watch the namespaces, Services and EndpointSlices of the cluster the
// kubeconfig points at. Prints one JSON line: memory once the client is loaded and once every kind
// has synced (after a full GC), the CPU seconds and wall time from the start to the sync.
//   node --expose-gc bench/packages-k8s.ts informer|reflector KUBECONFIG

import { pino } from "pino";
import type { Kind, Sink } from "../src/plugins/kubernetes/model/source.ts";

const [side, kubeconfig] = process.argv.slice(2);
const maybeGc = (globalThis as { gc?: () => void }).gc;
if (maybeGc === undefined || kubeconfig === undefined || !["informer", "reflector"].includes(side)) {
  throw new Error("usage: node --expose-gc bench/packages-k8s.ts informer|reflector KUBECONFIG");
}

const gc = maybeGc;
const MiB = 1024 * 1024;
function memory(): { rssMiB: number; heapMiB: number; externalMiB: number } {
  gc();
  const m = process.memoryUsage();
  return { rssMiB: m.rss / MiB, heapMiB: m.heapUsed / MiB, externalMiB: m.external / MiB };
}

/** Starts the kinds' list/watch and resolves once each has listed everything; returns the objects
 * seen and a stop function. */
async function informers(): Promise<{ objects: number; stop: () => Promise<void> }> {
  const k8s = await import("@kubernetes/client-node");
  loaded = memory();
  start = process.cpuUsage();
  t0 = performance.now();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  let objects = 0;
  const list = [
    k8s.makeInformer(kc, "/api/v1/namespaces", () => core.listNamespace()),
    k8s.makeInformer(kc, "/api/v1/services", () => core.listServiceForAllNamespaces()),
    k8s.makeInformer(kc, "/apis/discovery.k8s.io/v1/endpointslices", () =>
      discovery.listEndpointSliceForAllNamespaces(),
    ),
  ];
  for (const i of list) (i as { on(verb: string, cb: () => void): void }).on(k8s.ADD, () => objects++);
  await Promise.all(list.map((i) => i.start()));
  return { objects, stop: async () => void (await Promise.all(list.map((i) => i.stop()))) };
}

async function reflectors(): Promise<{ objects: number; stop: () => Promise<void> }> {
  const { createClient } = await import("../src/plugins/kubernetes/api/client.ts");
  const { Reflector } = await import("../src/plugins/kubernetes/api/reflector.ts");
  loaded = memory();
  start = process.cpuUsage();
  t0 = performance.now();
  const client = createClient({ kubeconfig });
  let objects = 0;
  // What the store does with each object is the store's cost, not the client's: count them only.
  const sink: Sink = { listStart() {}, apply: () => void objects++, listDone() {} };
  const log = pino({ level: "silent" });
  const kinds: Kind[] = ["namespaces", "services", "endpointslices"];
  const list = kinds.map((kind) => new Reflector({ client, kind, sink, log }));
  for (const r of list) r.start();
  await Promise.all(list.map((r) => r.waitSynced()));
  return { objects, stop: async () => void (await Promise.all(list.map((r) => r.stop()))) };
}

let loaded = memory();
let start = process.cpuUsage();
let t0 = performance.now();
const run = await (side === "informer" ? informers() : reflectors());
const cpu = process.cpuUsage(start);
const wallS = (performance.now() - t0) / 1000;
const synced = memory();
console.log(
  JSON.stringify({ side, objects: run.objects, cpuS: (cpu.user + cpu.system) / 1e6, wallS, loaded, synced }),
);
await run.stop();
process.exit(0);
