// The heap the kubernetes store takes for a generated cluster, measured in-process: no server, no
// sockets, no load, so it runs on a shared machine. The cluster is bench/cluster-gen.ts's, and with
// `--topology` every endpoint gets a zone (three zones), a quarter of them a topology hint, and one
// service in twenty is a LoadBalancer with an ingress IP (and one in a hundred an externalIP too): the
// fields the store keeps for zonal names and k8s_external, as a cloud cluster has them.
//   node --expose-gc bench/store-memory.ts [--services 10000] [--topology] [--root DIR]
// --root loads the store from another checkout (an older src/), to compare the same objects.

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { generateCluster } from "./cluster-gen.ts";

const { values } = parseArgs({
  options: {
    services: { type: "string", default: "10000" },
    topology: { type: "boolean", default: false },
    root: { type: "string", default: resolve(import.meta.dirname, "..") },
  },
});

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc");

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  endpoints?: Record<string, unknown>[];
};

const ZONES = ["europe-west1-b", "europe-west1-c", "europe-west1-d"];

/** Adds what a cloud cluster's objects carry: endpoint zones, some hints, some load balancers. */
function withTopology(objects: Obj[]): Obj[] {
  let n = 0;
  let svc = 0;
  for (const o of objects) {
    if (o.kind === "EndpointSlice") {
      for (const e of o.endpoints ?? []) {
        const zone = ZONES[n++ % ZONES.length];
        e.zone = zone;
        if (n % 4 === 0) e.hints = { forZones: [{ name: zone }] };
      }
    } else if (o.kind === "Service" && o.spec?.clusterIP !== "None" && o.spec?.type !== "ExternalName") {
      svc++;
      if (svc % 20 === 0) {
        o.spec!.type = "LoadBalancer";
        o.status = {
          loadBalancer: { ingress: [{ ip: `203.0.${(svc >> 8) & 255}.${svc & 255}`, ipMode: "VIP" }] },
        };
      }
      if (svc % 100 === 0) o.spec!.externalIPs = [`198.51.${(svc >> 8) & 255}.${svc & 255}`];
    }
  }
  return objects;
}

const KINDS: Record<string, string> = {
  Namespace: "namespaces",
  Service: "services",
  EndpointSlice: "endpointslices",
};

/** The cluster as JSON text per kind, so that the parsed objects are garbage by the time the heap is
 * measured: what stays is the store and the strings it holds. */
function clusterText(): { text: Map<string, string>; counts: object } {
  const cluster = generateCluster({ services: Number(values.services) });
  const objects = values.topology ? withTopology(cluster.objects as Obj[]) : (cluster.objects as Obj[]);
  const text = new Map<string, string>();
  for (const kind of Object.values(KINDS)) {
    text.set(kind, JSON.stringify(objects.filter((o) => KINDS[o.kind] === kind)));
  }
  return { text, counts: cluster.counts };
}
const { text, counts } = clusterText();

const { Store } = (await import(resolve(values.root, "src/plugins/kubernetes/store/store.ts"))) as {
  Store: new (o: { zones: string[]; waitFor: string[] }) => {
    listStart(kind: string): void;
    apply(kind: string, type: string, obj: unknown): void;
    listDone(kind: string): void;
    stats(): { bytes: number; objects: Record<string, number> };
  };
};

function heap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

// The store's heap is what a collection gives back once it is dropped: measured that way round, garbage
// left from generating the cluster cannot count.
function load() {
  const store = new Store({ zones: ["cluster.local."], waitFor: [...text.keys()] });
  for (const [kind, json] of text) {
    store.listStart(kind);
    for (const o of JSON.parse(json) as unknown[]) store.apply(kind, "ADDED", o);
    store.listDone(kind);
  }
  return store;
}
function loaded(): { after: number; stats: ReturnType<ReturnType<typeof load>["stats"]> } {
  const store = load();
  return { after: heap(), stats: store.stats() };
}
const { after, stats } = loaded();
const before = heap();
console.log(
  JSON.stringify({
    root: values.root,
    topology: values.topology,
    ...counts,
    heapBytes: after - before,
    heapMB: +((after - before) / 1048576).toFixed(2),
    statsBytes: stats.bytes,
  }),
);
