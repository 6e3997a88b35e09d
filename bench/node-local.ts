// What node-local mode costs one node: one clusterdns with the node-local Corefile's plugins
// (deploy/node-local/: kubeadm's Corefile with the cluster domain out of `cache`, BENCH_COREFILE
// kubeadm-disable) on the generated cluster behind the test API server, for each size in BENCH_SCALES
// (default 10000,100000 services). It measures
// - memory once synced, and at the end of BENCH_SECONDS (default 30) of a node's query load (dnsperf at
//   BENCH_QPS, default 2000 a second, over the cluster's names), split into anonymous and file-backed
//   (RssAnon, RssFile from /proc/PID/status), with the peak (VmHWM);
// - the bytes the watch brings in per Service change and per EndpointSlice change: clusterdns's own
//   socket reads (rchar in /proc/PID/io) over 50 changes of each, made one at a time with no query
//   load, divided by 50; and the size of the watch event the API sent for one.
//   npm run bench:node-local

import { readFileSync } from "node:fs";
import { dnsperf } from "./dnsperf.ts";
import { runWithQueries, sleep, type Running } from "./clusterdns-run.ts";
import { PIN, resetPeak, stop } from "./processes.ts";

process.env.BENCH_COREFILE ??= "kubeadm-disable";
const scales = (process.env.BENCH_SCALES ?? "10000,100000").split(",").map(Number);
const seconds = Number(process.env.BENCH_SECONDS ?? 30);
const qps = Number(process.env.BENCH_QPS ?? 2000);
const CHANGES = 50;

interface Memory {
  anon: number;
  file: number;
  rss: number;
  peak: number;
}

/** RssAnon, RssFile (+ RssShmem), VmRSS and VmHWM of a process, MiB. */
function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { anon: kb("RssAnon"), file: kb("RssFile") + kb("RssShmem"), rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Bytes a process has read through read-like system calls so far (its sockets, here). */
const rchar = (pid: number) => Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1]);

interface Obj {
  kind: string;
  metadata: { name: string; namespace: string };
  spec?: { type?: string; clusterIP?: string; clusterIPs?: string[] };
  endpoints?: { addresses: string[] }[];
}

/** Bytes clusterdns read per change, and the JSON of one watch event, for `change` applied CHANGES
 * times to objects of one kind. */
async function perChange(
  r: Running,
  pid: number,
  objs: Obj[],
  change: (o: Obj, i: number) => void,
): Promise<{ read: number; event: number }> {
  await sleep(1000);
  const before = rchar(pid);
  let event = 0;
  for (let i = 0; i < CHANGES; i++) {
    const o = objs[(i * 7919) % objs.length];
    change(o, i);
    if (o.kind === "Service") r.api.update("services", o as never);
    else r.api.update("endpointslices", o as never);
    event = JSON.stringify({ type: "MODIFIED", object: o }).length + 1;
    await sleep(20);
  }
  await sleep(1000);
  return { read: Math.round((rchar(pid) - before) / CHANGES), event };
}

interface Row {
  services: number;
  endpoints: number;
  synced: Memory;
  loaded: Memory;
  qps: number;
  lost: number;
  service: { read: number; event: number };
  slice: { read: number; event: number };
}

async function measure(services: number): Promise<Row> {
  const { cluster, r, queryFile } = await runWithQueries(services, "clusterdns-node-local-");
  try {
    const pid = r.cd.proc.pid!;
    await sleep(2000);
    const synced = memory(pid);
    const objs = cluster.objects as Obj[];
    const svcs = objs.filter((o) => o.kind === "Service" && o.spec?.type === "ClusterIP");
    const service = await perChange(r, pid, svcs, (o, i) => {
      const ip = `10.${200 + (i >> 8)}.${i & 255}.9`;
      o.spec!.clusterIP = ip;
      o.spec!.clusterIPs = [ip];
    });
    const slices = objs.filter((o) => o.kind === "EndpointSlice" && (o.endpoints?.length ?? 0) > 0);
    const slice = await perChange(r, pid, slices, (o, i) => {
      o.endpoints![0].addresses = [`10.${250 + (i >> 8)}.${i & 255}.9`];
    });
    resetPeak(pid);
    const perf = await dnsperf({ port: r.port, queryFile, seconds, maxQps: qps, core: PIN ? 1 : undefined });
    const loaded = memory(pid);
    return {
      services,
      endpoints: cluster.counts.endpoints,
      synced,
      loaded,
      qps: Math.round(perf.qps),
      lost: perf.sent - perf.completed,
      service,
      slice,
    };
  } finally {
    await stop(r.cd.proc);
    await r.api.close();
  }
}

const rows: Row[] = [];
for (const n of scales) {
  process.stderr.write(`node-local: ${n} services...\n`);
  rows.push(await measure(n));
}
const mb = (x: number) => x.toFixed(1);
process.stdout.write(
  [
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, Corefile ${process.env.BENCH_COREFILE}, ${seconds} s at ${qps} QPS, npm run bench:node-local`,
    "",
    "| services | endpoints | synced: anon / file / RSS MiB | after load: anon / file / RSS MiB | peak under load MiB | QPS | lost |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (x) =>
        `| ${x.services} | ${x.endpoints} | ${mb(x.synced.anon)} / ${mb(x.synced.file)} / ${mb(x.synced.rss)} | ${mb(x.loaded.anon)} / ${mb(x.loaded.file)} / ${mb(x.loaded.rss)} | ${mb(x.loaded.peak)} | ${x.qps} | ${x.lost} |`,
    ),
    "",
    "| services | bytes read per Service change | its watch event | bytes read per EndpointSlice change | its watch event |",
    "|---|---|---|---|---|",
    ...rows.map(
      (x) =>
        `| ${x.services} | ${x.service.read} | ${x.service.event} | ${x.slice.read} | ${x.slice.event} |`,
    ),
  ].join("\n") + "\n",
);
