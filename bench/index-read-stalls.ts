// How long a worker thread's read sections take while the main thread applies watch events to the
// shared index (-workers N in a watch storm), in-process and without sockets, so that a probe's own
// jitter is not in the figure: a generated cluster is listed into a SharedIndex, a reader thread reads
// one service and its slices (what a headless answer reads) over and over, timing each read, while the
// writer applies EndpointSlice events at RATE a second in 1 ms slices, as the apply queue does. With
// RATE 0 the writer applies nothing: the reader's own floor (its collections, the scheduler).
//   node --max-semi-space-size=1 bench/index-read-stalls.ts [SERVICES] [SECONDS] [RATE]

import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { IndexReader, SharedIndex } from "../src/offheap/shared-index.ts";
import type { ArenaHandle } from "../src/offheap/arena.ts";
import { STORE_TABLES } from "../src/plugins/kubernetes/store/tables.ts";
import { listCluster, readinessFlips } from "./slice-events.ts";

interface ReaderData {
  handle: ArenaHandle;
  keys: string[];
}

/** Reads in turns of 20 ms until told to stop, then posts its summary line. */
function reader({ handle, keys }: ReaderData): void {
  const r = new IndexReader(handle, 0);
  const services = r.table("services", STORE_TABLES.services);
  const byService = r.table("slices.byService", STORE_TABLES["slices.byService"]);
  const slices = r.table("slices", STORE_TABLES.slices);
  const took = new Float64Array(4_000_000);
  let n = 0;
  let stop = false;
  parentPort!.once("message", () => (stop = true));
  const turn = () => {
    const end = performance.now() + 20;
    while (performance.now() < end && n < took.length) {
      const k = keys[(Math.random() * keys.length) | 0];
      const t0 = performance.now();
      r.read(() => {
        services.get(k);
        for (const s of byService.get(k) ?? []) slices.get(s);
      });
      took[n++] = performance.now() - t0;
    }
    if (!stop) return void setImmediate(turn);
    const sorted = took.slice(0, n).sort();
    const at = (p: number) => sorted[Math.min(n - 1, Math.floor(p * n))].toFixed(3);
    let slow = 0;
    for (let i = 0; i < n; i++) if (sorted[i] > 0.5) slow++;
    parentPort!.postMessage(
      `${n} reads: p50 ${at(0.5)}, p99 ${at(0.99)}, p99.9 ${at(0.999)}, p99.99 ${at(0.9999)}, ` +
        `worst ${sorted[n - 1].toFixed(2)} ms; ${slow} over 0.5 ms; ${r.retried} read again`,
    );
  };
  turn();
}

async function writer(): Promise<void> {
  const { generateCluster } = await import("./cluster-gen.ts");
  const { Store } = await import("../src/plugins/kubernetes/store/store.ts");
  type Objects = import("../src/plugins/kubernetes/model/source.ts").KObject & { kind: string };
  const services = Number(process.argv[2] ?? 10_000);
  const seconds = Number(process.argv[3] ?? 3);
  const rate = Number(process.argv[4] ?? 10_000);
  const cluster = generateCluster({ services, seed: 33 });
  const objects = cluster.objects as Objects[];
  const events = readinessFlips(objects, rate * seconds);
  const index = new SharedIndex();
  const store = new Store({
    zones: ["cluster.local.", "in-addr.arpa.", "ip6.arpa."],
    waitFor: ["services", "endpointslices", "namespaces"],
    tables: index,
    onChange: () => {},
  });
  listCluster(store, objects, (fn) => index.write(fn));
  const keys = objects
    .filter((o) => o.kind === "Service")
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
  const data: ReaderData = { handle: index.handle, keys };
  const thread = new Worker(new URL(import.meta.url), { workerData: data });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const t0 = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    const slice = () => {
      const elapsed = performance.now() - t0;
      if (elapsed >= seconds * 1000) return done();
      const due = Math.min(events.length, Math.floor((elapsed * rate) / 1000));
      const end = performance.now() + 1;
      while (next < due && performance.now() < end) {
        const e = JSON.parse(events[next++]) as { type: "MODIFIED"; object: Objects };
        index.write(() => store.apply("endpointslices", e.type, e.object));
      }
      setImmediate(slice);
    };
    slice();
  });
  thread.postMessage("stop");
  const line = await new Promise<string>((resolve) => thread.once("message", resolve));
  process.stdout.write(`${services} services, ${next} events in ${seconds} s: ${line}\n`);
  await thread.terminate();
}

if (isMainThread) await writer();
else reader(workerData as ReaderData);
