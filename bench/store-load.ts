// What the first list of a large cluster costs the kubernetes store, in-process (no server, no API, so
// it runs on a shared machine; CPU time is the figure to compare): the benchmark's generated cluster
// (bench/cluster-gen.ts) listed once, every object one apply, then the sync. --shared keeps the store
// in a shared index, each call one write section as the server's main thread does (src/offheap/,
// shared-store.ts); without it, in Maps. --writes also counts the writes and reads of each table.
//   node bench/store-load.ts [--services 100000] [--shared] [--writes]

import { parseArgs } from "node:util";
import { Store } from "../src/plugins/kubernetes/store/store.ts";
import { SharedIndex } from "../src/offheap/shared-index.ts";
import { SharedTable, SharedTableView } from "../src/offheap/shared-table.ts";
import type { Codec } from "../src/offheap/table.ts";
import type { Kind, KObject } from "../src/plugins/kubernetes/model/source.ts";
import { generateCluster } from "./cluster-gen.ts";

const { values } = parseArgs({
  options: {
    services: { type: "string", default: "100000" },
    shared: { type: "boolean", default: false },
    writes: { type: "boolean", default: false },
  },
});
const KINDS: Kind[] = ["namespaces", "services", "endpointslices"];
const KIND_OF: Record<string, Kind> = {
  Namespace: "namespaces",
  Service: "services",
  EndpointSlice: "endpointslices",
};

/** Writes and reads per table name (--writes). */
const counts = new Map<string, { sets: number; gets: number }>();
if (values.writes) {
  const names = new WeakMap<object, string>();
  const table = SharedIndex.prototype.table;
  SharedIndex.prototype.table = function <V>(this: SharedIndex, name: string, codec: Codec<V>) {
    const t = table.call(this, name, codec) as SharedTable<V>;
    names.set(t, name);
    return t;
  };
  const count = (t: object, what: "sets" | "gets") => {
    const name = names.get(t) ?? "?";
    const c = counts.get(name) ?? { sets: 0, gets: 0 };
    c[what]++;
    counts.set(name, c);
  };
  const set = SharedTable.prototype.set;
  SharedTable.prototype.set = function (this: SharedTable<unknown>, k: string, v: unknown) {
    count(this, "sets");
    set.call(this, k, v);
  };
  const get = SharedTableView.prototype.get;
  SharedTableView.prototype.get = function (this: SharedTableView<unknown>, k: string) {
    count(this, "gets");
    return get.call(this, k);
  };
}

const objects = generateCluster({ services: Number(values.services), bigHeadless: 5000 })
  .objects as KObject[];
const index = values.shared ? new SharedIndex() : undefined;
const store = new Store({ zones: ["cluster.local.", "in-addr.arpa."], waitFor: KINDS, tables: index });
const section = index ? (fn: () => void) => index.write(fn) : (fn: () => void) => fn();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
for (const k of KINDS) section(() => store.listStart(k));
for (const o of objects) section(() => store.apply(KIND_OF[(o as { kind: string }).kind], "ADDED", o));
for (const k of KINDS) section(() => store.listDone(k));
const cpu = process.cpuUsage(cpu0);
const ms = performance.now() - t0;
if (!store.synced) throw new Error("the store did not sync");
process.stdout.write(
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${values.shared ? "shared index" : "Maps"}: ` +
    `${objects.length} objects (${values.services} services) listed in ${ms.toFixed(0)} ms, ` +
    `CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, ${store.stats().addresses} addresses\n`,
);
for (const [name, c] of counts) process.stdout.write(`  ${name}: ${c.sets} writes, ${c.gets} reads\n`);
