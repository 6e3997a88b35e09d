// Watch storms as a part of the reliability suite: a rollout of a large Deployment or a node failure
// sends thousands of EndpointSlice changes a second down the watch. clusterdns (kubeadm's Corefile,
// Corefile.example, reading a generated cluster through the test API server) serves a steady UDP load
// while the API sends bursts of watch events; the probe's p99 is measured idle, during the storm and
// after it, in the same run, and the storm's p99 must stay within 2x the idle one. Afterwards the
// store must hold the API's objects (every event applied, none lost, none reordered).
// Full: 10 bursts of 10,000 events a second at 5,000 QPS, at 10k and at 100k Services. Reduced (npm
// test): 500 Services, 3 bursts of 2,000 events at 500 QPS, 1 s idle and after, with the store
// compared to the API.
//   npm run soak -- watch-storm [--reduced]     (or node test/soak/watch-storm.ts [--reduced])

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { generateCluster } from "../../bench/cluster-gen.ts";
import { benchCorefile, serveCluster } from "../../bench/cluster-api.ts";
import { NO_UPSTREAM, startClusterdns, untilSynced } from "../../bench/clusterdns-run.ts";
import { pinning, setPinning, stop } from "../../bench/processes.ts";
import { apiDump, compareDumps, snapshotDump, type Comparison } from "../k8s/store-compare.ts";
import type { TestApiServer } from "../k8s/api-server.ts";
import { SERVICE_NAME_LABEL } from "../../src/plugins/kubernetes/model/source.ts";
import type { KEndpointSlice, Kind, KService } from "../../src/plugins/kubernetes/model/source.ts";
import { exchangeUdp } from "../helpers/udp-exchange.ts";
import { encode } from "../../src/dns/encode.ts";
import { decode } from "../../src/dns/decode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { Type } from "../../src/dns/constants.ts";
import { udpProbe, type ProbeSummary } from "./udp-probe.ts";
import { Report, rssMb, runAlone, type PartOptions, type SoakPart } from "./part.ts";

export interface StormOptions {
  services: number;
  /** Bursts, one a second. */
  bursts: number;
  /** Watch events in each burst, all written at once at the start of its second. */
  eventsPerBurst: number;
  qps: number;
  /** Seconds of load measured before the storm, and again after it. */
  idleSeconds: number;
  /** Write the store to a snapshot file every second and compare it with the API afterwards. */
  compareStore: boolean;
  /** The checkout whose clusterdns runs (this one by default): a before/after in one run. */
  checkout?: string;
  /** Extra node flags for clusterdns (--cpu-prof when profiling a storm). */
  nodeFlags?: string[];
  /** clusterdns flags (-workers 2) and environment for its process. */
  args?: string[];
  env?: Record<string, string>;
  /** Let clusterdns run on every core (a run with worker threads); pinned to core 0 by default. */
  unpinned?: boolean;
  log?: (line: string) => void;
}

export interface StormRun {
  services: number;
  idle: ProbeSummary;
  storm: ProbeSummary;
  after: ProbeSummary;
  /** Events the API sent, and how long the storm lasted (from the first burst to its end), ms. */
  events: number;
  stormMs: number;
  /** From a change written after the last burst to the first answer showing it, ms. */
  catchUpMs?: number;
  rssMb: { idle: number; peak: number };
  /** The 1-minute load average of the machine when the storm began. */
  load: number;
  store?: Comparison;
  /** The main thread's UDP sockets stepped aside during the storm (worker threads only). */
  steppedAside: boolean;
}

const ZONES = ["cluster.local.", "in-addr.arpa.", "ip6.arpa."];
const PROBE_WARM_S = 1;
const KINDS: Kind[] = ["services", "namespaces", "endpointslices"];

/** One watch event: the slice's first endpoint flips ready (a pod failing its probe, or coming back),
 * and for a slice of a headless service that changes its answers. */
function flip(slice: KEndpointSlice): void {
  const c = slice.endpoints?.[0]?.conditions;
  if (c) c.ready = c.serving = !c.ready;
}

export async function runStorm(o: StormOptions): Promise<StormRun> {
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-storm-"));
  const cluster = generateCluster({ services: o.services, seed: 33 });
  const headless = new Set(
    (cluster.objects as KService[])
      .filter((x) => x.kind === "Service" && x.spec.clusterIP === "None")
      .map((x) => `${x.metadata.namespace}/${x.metadata.name}`),
  );
  const slices = cluster.objects.filter(
    (x) => (x as KEndpointSlice).kind === "EndpointSlice",
  ) as KEndpointSlice[];
  let api: TestApiServer | undefined;
  let cd: Awaited<ReturnType<typeof startClusterdns>>["cd"] | undefined;
  try {
    const served = await serveCluster(cluster.objects, dir);
    api = served.api;
    const snapshot = join(dir, "snapshot.json");
    const source = `kubeconfig ${served.kubeconfig}${o.compareStore ? `\n        snapshot ${snapshot} 1s` : ""}`;
    const corefile = join(dir, "Corefile");
    writeFileSync(corefile, benchCorefile("kubeadm-disable", served.kubeconfig, NO_UPSTREAM, source));
    const wasPinned = pinning();
    if (o.unpinned) setPinning(false);
    const started = await startClusterdns(corefile, {
      nodeFlags: o.nodeFlags,
      checkout: o.checkout,
      args: o.args,
      env: o.env,
    }).finally(() => setPinning(wasPinned));
    cd = started.cd;
    await untilSynced(cd);
    const pid = cd.proc.pid!;
    // The hot mix of the cluster, without the outside names (nothing answers them here).
    // 10,000 of them at most: they go to the probe as arguments.
    const names = cluster.queries
      .filter((q) => !q.startsWith("api-"))
      .slice(0, 10_000)
      .map((q) =>
        q
          .replace(/ A$/, "")
          .replace(/ AAAA$/, "/28")
          .replace(/ SRV$/, "/33"),
      );
    // Each phase's probe warms for a second (a probe just started answers itself late), then measures.
    const probe = (seconds: number) =>
      udpProbe(started.port, { qps: o.qps, seconds, names, warmSeconds: PROBE_WARM_S });
    // Warm the answer stores (every thread's: with worker threads each holds its own), then the idle
    // measure: three passes over the names at full scale, so the idle p99 is the steady state's.
    await probe(Math.min(Math.ceil((3 * names.length) / o.qps), o.idleSeconds)).done;
    log(`${o.services} services synced; idle ${o.idleSeconds} s at ${o.qps} qps`);
    const idle = await probe(o.idleSeconds).done;
    const rssIdle = rssMb(pid);
    // The storm's events are made beforehand and held by the API, so that making them costs nothing
    // during the measure: each second, one burst of them is written to the watch at once.
    log(`making ${o.bursts * o.eventsPerBurst} events`);
    api.holdWatches();
    for (let i = 0; i < o.bursts * o.eventsPerBurst; i++) {
      const s = slices[i % slices.length];
      flip(s);
      api.update("endpointslices", s);
    }
    // A last event behind the whole storm on the same watch: a headless service's slice gets a new
    // address; once that answers, every event before it was applied.
    const marker = slices.find((s) =>
      headless.has(`${s.metadata.namespace}/${s.metadata.labels?.[SERVICE_NAME_LABEL]}`),
    )!;
    marker.endpoints![0] = { addresses: ["10.255.3.3"], conditions: { ready: true, serving: true } };
    api.update("endpointslices", marker);
    const markerName = `${marker.metadata.labels![SERVICE_NAME_LABEL]}.${marker.metadata.namespace}.svc.cluster.local.`;
    const load = loadavg()[0];
    log(`storm: ${o.bursts} bursts of ${o.eventsPerBurst} events (load ${load.toFixed(2)})`);
    const during = probe(o.bursts + 1);
    await sleep(PROBE_WARM_S * 1000);
    let events = 0;
    let peak = rssIdle;
    const t0 = performance.now();
    for (let b = 0; b < o.bursts; b++) {
      await sleep(Math.max(0, t0 + b * 1000 - performance.now()));
      events += api.releaseWatches(b === o.bursts - 1 ? undefined : o.eventsPerBurst);
      peak = Math.max(peak, rssMb(pid));
    }
    const lastWrite = performance.now();
    const catchUpMs = await untilAnswers(started.port, markerName, "10.255.3.3", lastWrite);
    const storm = await during.done;
    const stormMs = performance.now() - t0;
    peak = Math.max(peak, rssMb(pid));
    const after = await probe(o.idleSeconds).done;
    let store: Comparison | undefined;
    if (o.compareStore) store = await settled(api, snapshot);
    return {
      services: o.services,
      idle,
      storm,
      after,
      events,
      stormMs,
      catchUpMs,
      rssMb: { idle: rssIdle, peak },
      load,
      store,
      steppedAside: started.cd.lines.some((l) => l.includes("UDP sockets step aside")),
      ...({
        serverLines: started.cd.lines.map((l, i) => `${(started.cd.times[i] - t0).toFixed(0)} ${l}`),
      } as object),
    };
  } finally {
    // A profiled run stops gracefully, so that node writes its profile.
    if (cd) await stop(cd.proc, o.nodeFlags ? 20_000 : 0);
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Asks `name` every 5 ms until an answer holds `ip`; ms since `from`, or undefined after 30 s. */
async function untilAnswers(
  port: number,
  name: string,
  ip: string,
  from: number,
): Promise<number | undefined> {
  while (performance.now() - from < 30_000) {
    const reply = await exchangeUdp(port, encode(newQuery(name, Type.A)), 200);
    if (reply && decode(reply).answer.some((rr) => "address" in rr.data && rr.data.address === ip)) {
      return performance.now() - from;
    }
    await sleep(5);
  }
  return undefined;
}

/** Compares the snapshot file with the API until equal, 20 s at most; the last comparison. */
async function settled(api: TestApiServer, file: string): Promise<Comparison> {
  let last: Comparison = { equal: false, records: 0, differences: ["no snapshot written"] };
  for (let i = 0; i < 80 && !last.equal; i++) {
    await sleep(250);
    const got = snapshotDump(file);
    if (got) last = compareDumps(got, apiDump(api, { zones: ZONES, kinds: KINDS }));
  }
  return last;
}

/** A latency; a phase with no answer at all has none (NaN, null once through JSON). */
const ms = (x: number | null) => (x === null || !Number.isFinite(x) ? "none answered" : `${x.toFixed(1)} ms`);

export function stormLine(r: StormRun): string {
  return (
    `${r.services} services: p99 idle ${ms(r.idle.p99Ms)}, storm ${ms(r.storm.p99Ms)} ` +
    `(${(r.storm.p99Ms / r.idle.p99Ms).toFixed(2)}x), after ${ms(r.after.p99Ms)}; worst in storm ` +
    `${ms(r.storm.worstMs)}; ${r.events} events in ${(r.stormMs / 1000).toFixed(1)} s; lost ` +
    `${r.idle.lost}/${r.storm.lost}/${r.after.lost}; RSS ${r.rssMb.idle.toFixed(0)} -> peak ` +
    `${r.rssMb.peak.toFixed(0)} MB; load ${r.load.toFixed(2)}${r.steppedAside ? "; main thread stepped aside" : ""}`
  );
}

export const watchStorm: SoakPart = {
  name: "watch-storm",
  what: "bursts of 10,000 watch events a second while 5,000 QPS are served, at 10k and 100k Services",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("watch-storm");
    const sizes = o.reduced ? [500] : [10_000, 100_000];
    // Each size twice: as kubeadm's Corefile runs it, one thread on one core, which both applies the
    // events and answers; and with -workers 2 on every core, where the main thread applies them and
    // steps aside from UDP (src/server/step-aside.ts) while the worker answers. The target is the
    // second's: the first has no other thread to move the work to, and its ratio is reported.
    const runs = sizes.flatMap((services) => [
      { services, workers: 1 },
      { services, workers: 2 },
    ]);
    for (const { services, workers } of runs) {
      const r = await runStorm({
        services,
        bursts: o.reduced ? 3 : 10,
        eventsPerBurst: o.reduced ? 2000 : 10_000,
        qps: o.reduced ? 500 : 5000,
        idleSeconds: o.reduced ? 1 : 10,
        compareStore: o.reduced,
        args: workers > 1 ? ["-workers", String(workers)] : undefined,
        unpinned: workers > 1,
        log: o.log,
      });
      o.log(stormLine(r));
      const at = `${services} services, ${workers === 1 ? "1 thread" : `-workers ${workers}`}`;
      const ratio = r.storm.p99Ms / r.idle.p99Ms;
      report.note(
        `${at}: p99 idle / storm / after`,
        `${ms(r.idle.p99Ms)} / ${ms(r.storm.p99Ms)} / ${ms(r.after.p99Ms)}`,
      );
      report.note(`${at}: worst answer in the storm`, ms(r.storm.worstMs));
      report.note(`${at}: load average at the storm`, r.load);
      // Timing is only a target at full scale: the reduced run is for correctness, on a shared machine.
      if (o.reduced || workers === 1) report.note(`${at}: storm p99 over idle p99`, `${ratio.toFixed(2)}x`);
      else report.check(`${at}: storm p99 over idle p99`, `${ratio.toFixed(2)}x`, ratio <= 2, "<= 2x");
      if (workers > 1)
        report.check(
          `${at}: the main thread stepped aside from UDP during the storm`,
          r.steppedAside ? "yes" : "no",
          r.steppedAside,
          "yes",
        );
      const lost = r.idle.lost + r.storm.lost + r.after.lost;
      const failed = r.idle.failed + r.storm.failed + r.after.failed;
      report.check(
        `${at}: queries lost or failed`,
        `${lost} lost, ${failed} failed`,
        lost + failed === 0,
        "0",
      );
      report.check(
        `${at}: every event applied (a change after the last burst answers)`,
        r.catchUpMs === undefined ? "no" : `yes, ${ms(r.catchUpMs)} after the last burst`,
        r.catchUpMs !== undefined,
        "yes",
      );
      report.note(`${at}: RSS idle -> peak`, `${r.rssMb.idle.toFixed(0)} -> ${r.rssMb.peak.toFixed(0)} MB`);
      if (r.store) {
        const text = r.store.equal
          ? `yes (${r.store.records} records)`
          : `no: ${r.store.differences.join("; ")}`;
        report.check(`${at}: store equal to the API after the storm`, text, r.store.equal, "yes");
      }
    }
    return report;
  },
};

if (import.meta.main) await runAlone(watchStorm);
