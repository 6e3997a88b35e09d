// The scale run: for each cluster size (BENCH_SCALES, default 1000,10000,100000 services) and each way
// of reading it (BENCH_SOURCES, default api,objects: the test API server through a kubeconfig, or an
// `objects` file of the same cluster), one clusterdns. Each cluster also holds a headless service of
// BENCH_BIG_HEADLESS (default 5000) endpoints. It measures start to listening, start to ready (the
// "synced" line, when /ready turns 200), the CPU time clusterdns spent until then (its own share: the
// rest is waiting for the API server, which runs in this process) and, through the API, the time
// after the last LIST; RSS once
// ready and the peak while starting; through the API also the peak during a forced relist (the API
// ends every watch with 410 Gone, then a LIST of everything again) and propagation for 20
// changes. Then the big headless service's A answer over UDP without EDNS, with EDNS (1232), and
// over TCP: records, TC, and the time of the first query and the median of the next 20.
// It prints tables with CoreDNS's memory formula for the same cluster: (pods + services) / 1000 + 54 MB.
//   npm run bench:scale

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIG_HEADLESS, generateCluster, type Cluster } from "./cluster-gen.ts";
import { memoryOf, resetPeak, stop } from "./processes.ts";
import {
  corednsFormulaMb,
  propagation,
  quantile,
  runOnCluster,
  runOnObjects,
  sleep,
  type Launched,
} from "./clusterdns-run.ts";
import { exchangeUdp } from "../test/helpers/udp-exchange.ts";
import { exchangeTcp } from "../test/helpers/tcp-exchange.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { newQuery, type Msg } from "../src/dns/message.ts";
import { Type } from "../src/dns/constants.ts";

export type Source = "api" | "objects";

export interface Row {
  services: number;
  endpoints: number;
  pods: number;
  source: string;
  listeningS: string;
  readyS: string;
  cpuS: string;
  afterListS: string;
  rss: number;
  startPeak: number;
  relistPeak: string;
  coredns: number;
  propagation: string;
  big: BigAnswer[];
}

/** How the big headless service's A answer came back over one transport. */
export interface BigAnswer {
  transport: string;
  /** The most octets the transport carries: 512 without EDNS, the EDNS size asked, 65,535 on TCP. */
  limit: number;
  records: number;
  tc: boolean;
  octets: number;
  firstMs: number;
  medianMs: number;
}

const TRANSPORTS = [
  { transport: "UDP, no EDNS (512)", limit: 512, edns: false, tcp: false },
  { transport: "UDP, EDNS 1232", limit: 1232, edns: true, tcp: false },
  { transport: "TCP (65535)", limit: 65535, edns: true, tcp: true },
];

/** Asks the big headless service's A records 21 times over each transport. */
async function askBig(port: number): Promise<BigAnswer[]> {
  const out: BigAnswer[] = [];
  for (const t of TRANSPORTS) {
    const q: Msg = newQuery(`${BIG_HEADLESS}.cluster.local.`, Type.A);
    if (t.edns) q.edns = { udpSize: 1232, version: 0, do: false, options: [] };
    const wire = encode(q);
    const times: number[] = [];
    let reply: Buffer | undefined;
    for (let i = 0; i < 21; i++) {
      const t0 = performance.now();
      reply = t.tcp ? await exchangeTcp(port, wire) : await exchangeUdp(port, wire, 5000);
      times.push(performance.now() - t0);
      if (reply === undefined) throw new Error(`${t.transport}: no answer`);
    }
    const m = decode(reply!);
    const rest = times.slice(1).sort((a, b) => a - b);
    out.push({
      transport: t.transport,
      limit: t.limit,
      records: m.answer.length,
      tc: m.tc,
      octets: reply!.length,
      firstMs: times[0],
      medianMs: rest[rest.length >> 1],
    });
  }
  return out;
}

function row(cluster: Cluster, source: string, r: Launched, rss: number, startPeak: number): Row {
  const c = cluster.counts;
  return {
    services: c.services,
    endpoints: c.endpoints,
    pods: c.pods,
    source,
    listeningS: (r.startToListeningMs / 1000).toFixed(2),
    readyS: (r.startToSyncedMs / 1000).toFixed(1),
    cpuS: r.cpuToSyncedS.toFixed(1),
    afterListS: "-",
    rss: Math.round(rss),
    startPeak: Math.round(startPeak),
    relistPeak: "-",
    coredns: corednsFormulaMb(c),
    propagation: "-",
    big: [],
  };
}

async function throughApi(cluster: Cluster): Promise<Row> {
  const r = await runOnCluster(cluster, mkdtempSync(join(tmpdir(), "clusterdns-scale-")));
  try {
    const pid = r.cd.proc.pid!;
    await sleep(2000);
    const synced = memoryOf(pid);
    const out = row(cluster, "API", r, synced.rss, synced.peak);
    out.afterListS = (r.listToSyncedMs / 1000).toFixed(2);
    out.big = await askBig(r.port);
    // Reset the peak (VmHWM) so the relist's own peak shows.
    resetPeak(pid);
    const lists = r.api.requests.length;
    // A 410 on every watch. (Compacting and dropping the watches did not do it: the watches resumed
    // from the list's resourceVersion, which a compaction at that same version keeps.)
    r.api.expireWatches();
    // Relisted once every kind's watch is open again after new LISTs.
    for (let i = 0; i < 3000; i++) {
      await sleep(20);
      const relisted = r.api.requests.slice(lists).filter((q) => !q.watch).length > 0;
      if (relisted && r.api.openWatches() >= 3) break;
    }
    await sleep(2000);
    out.relistPeak = String(Math.round(memoryOf(pid).peak));
    const times = await propagation(r, cluster, 20);
    out.propagation = `${quantile(times, 0.5)} / ${quantile(times, 0.99)}`;
    return out;
  } finally {
    await stop(r.cd.proc);
    await r.api.close();
  }
}

async function fromObjects(cluster: Cluster): Promise<Row> {
  const r = await runOnObjects(cluster, mkdtempSync(join(tmpdir(), "clusterdns-scale-")));
  try {
    await sleep(2000);
    const synced = memoryOf(r.cd.proc.pid);
    const out = row(cluster, "objects", r, synced.rss, synced.peak);
    out.big = await askBig(r.port);
    return out;
  } finally {
    await stop(r.cd.proc);
  }
}

/** One row per cluster size and source, in that order. */
export async function scaleRows(
  scales: readonly number[],
  sources: readonly Source[],
  bigHeadless: number,
  log: (line: string) => void,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of scales) {
    const cluster = generateCluster({ services: n, bigHeadless });
    for (const source of sources) {
      log(`scale: ${n} services through ${source}...`);
      rows.push(await (source === "api" ? throughApi(cluster) : fromObjects(cluster)));
    }
  }
  return rows;
}

/** The rows as two Markdown tables: start and memory, then the big headless service's answers. */
export function scaleTables(rows: readonly Row[], bigHeadless: number): string {
  const ms = (x: number) => x.toFixed(1);
  return [
    "| services | endpoints | pods | source | start to listening s | start to ready s | CPU s to ready | ready after last LIST s | RSS MB | peak at start MB | peak in relist MB | CoreDNS formula MB | propagation p50 / p99 ms |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (x) =>
        `| ${x.services} | ${x.endpoints} | ${x.pods} | ${x.source} | ${x.listeningS} | ${x.readyS} | ${x.cpuS} | ${x.afterListS} | ${x.rss} | ${x.startPeak} | ${x.relistPeak} | ${x.coredns} | ${x.propagation} |`,
    ),
    "",
    `The headless service of ${bigHeadless} endpoints, A records (first query, then the median of 20 more):`,
    "",
    "| services | source | transport | records | TC | octets | first ms | median ms |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.flatMap((x) =>
      x.big.map(
        (b) =>
          `| ${x.services} | ${x.source} | ${b.transport} | ${b.records} | ${b.tc ? 1 : 0} | ${b.octets} | ${ms(b.firstMs)} | ${ms(b.medianMs)} |`,
      ),
    ),
  ].join("\n");
}

if (import.meta.main) {
  const bigHeadless = Number(process.env.BENCH_BIG_HEADLESS ?? 5000);
  const rows = await scaleRows(
    (process.env.BENCH_SCALES ?? "1000,10000,100000").split(",").map(Number),
    (process.env.BENCH_SOURCES ?? "api,objects").split(",") as Source[],
    bigHeadless,
    (line) => process.stderr.write(line + "\n"),
  );
  const date = new Date().toISOString().slice(0, 10);
  process.stdout.write(
    `${date}, Node ${process.version}, npm run bench:scale\n\n${scaleTables(rows, bigHeadless)}\n`,
  );
}
