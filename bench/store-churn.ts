// What a big service's endpoint churn costs the kubernetes store, in-process (no server, no sockets,
// so it runs on a shared machine): one service of N endpoints in EndpointSlices of 100, as the
// EndpointSlice controller cuts them, listed once, then 200 watch events that each flip one endpoint's
// readiness, as a rollout does. Each event runs on the event loop that answers queries, so its time is
// how long every query waits behind it.
//   node bench/store-churn.ts [--endpoints 1000,5000,20000] [--headless] [--shared]
// --shared keeps the store in a shared index (as the server does, src/offheap/), each event one write
// section; without it, in Maps.

import { parseArgs } from "node:util";
import { Store } from "../src/plugins/kubernetes/store/store.ts";
import { SharedIndex } from "../src/offheap/shared-index.ts";
import type { Kind } from "../src/plugins/kubernetes/model/source.ts";
import { endpointSlice, namespace, service } from "../test/k8s/objects.ts";

const { values } = parseArgs({
  options: {
    endpoints: { type: "string", default: "1000,5000,20000" },
    headless: { type: "boolean", default: false },
    shared: { type: "boolean", default: false },
  },
});
const KINDS: Kind[] = ["services", "endpointslices", "namespaces"];
const EVENTS = 200;

function measure(n: number): { listMs: number; p50: number; p99: number } {
  const index = values.shared ? new SharedIndex() : undefined;
  const store = new Store({ zones: ["cluster.local.", "in-addr.arpa."], waitFor: KINDS, tables: index });
  const section = index ? (fn: () => void) => index.write(fn) : (fn: () => void) => fn();
  const ports = [{ name: "http", port: 80 }];
  const slices = Array.from({ length: Math.ceil(n / 100) }, (_, s) =>
    endpointSlice(
      "default",
      "big",
      `big-${s}`,
      Array.from(
        { length: Math.min(100, n - s * 100) },
        (_, i) => `10.${200 + (s >> 8)}.${s & 255}.${i + 1}`,
      ),
      { ports },
    ),
  );
  const t0 = performance.now();
  for (const k of KINDS) store.listStart(k);
  store.apply("namespaces", "ADDED", namespace("default"));
  const svc = values.headless ? { headless: true, ports } : { clusterIP: "10.96.0.99", ports };
  store.apply("services", "ADDED", service("default", "big", svc));
  for (const s of slices) store.apply("endpointslices", "ADDED", s);
  for (const k of KINDS) store.listDone(k);
  const listMs = performance.now() - t0;
  const times: number[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const at = i % slices.length;
    const s = structuredClone(slices[at]);
    const e = s.endpoints![(i * 7) % s.endpoints!.length];
    e.conditions = { ...e.conditions, ready: !(e.conditions?.ready ?? true) };
    slices[at] = s;
    const t = performance.now();
    section(() => store.apply("endpointslices", "MODIFIED", s));
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { listMs, p50: times[EVENTS >> 1], p99: times[Math.floor(EVENTS * 0.99)] };
}

const rows = values.endpoints.split(",").map((n) => ({ n: Number(n), ...measure(Number(n)) }));
process.stdout.write(
  [
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, node bench/store-churn.ts` +
      ` (${values.headless ? "headless" : "cluster IP"} service)`,
    "",
    "| endpoints | slices | first list ms | one endpoint flips: p50 / p99 ms |",
    "|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.n} | ${Math.ceil(r.n / 100)} | ${r.listMs.toFixed(0)} | ${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} |`,
    ),
  ].join("\n") + "\n",
);
