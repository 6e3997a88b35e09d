// Kubernetes API faults while clusterdns serves a steady load: a real clusterdns process watches the
// test API server through a kubeconfig, a steady UDP load asks names that exist all along, and one
// fault after another hits the API: killed and restarted, 410 Gone on the watches, 500s on every LIST,
// a silent watch, truncated JSON, a relist whose continue token expires, objects deleted during a
// relist. During each fault a Service is created, one is changed and one is deleted.
// Per fault it reports: queries for known names that failed (target 0), how long the fault lasted, the
// seconds from its end until the new Service answers (target <= 5), and whether the store, read from
// the process's snapshot file, equals the API's objects afterwards (test/k8s/store-compare.ts).
//   npm run soak -- k8s-faults [--reduced]     (or node test/soak/k8s-faults.ts [--reduced])

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type RecordedRequest, type TestApiServer } from "../k8s/api-server.ts";
import { writeKubeconfig } from "../k8s/kubeconfig.ts";
import { service } from "../k8s/objects.ts";
import { apiDump, compareDumps, snapshotDump, type Comparison } from "../k8s/store-compare.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { startMixedLoad, type Question } from "../helpers/load.ts";
import { exchangeUdp } from "../helpers/udp-exchange.ts";
import { generateCluster } from "../../bench/cluster-gen.ts";
import { serveObjects } from "../../bench/cluster-api.ts";
import { encode } from "../../src/dns/encode.ts";
import { decode } from "../../src/dns/decode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { Type } from "../../src/dns/constants.ts";
import type { Kind, KService } from "../../src/plugins/kubernetes/model/source.ts";
import { SILENT_WATCH_MS } from "../../src/plugins/kubernetes/api/reflector.ts";
import { Report, runAlone, type PartOptions, type SoakPart } from "./part.ts";

export interface FaultsOptions {
  /** Services in the generated cluster; more than 500 makes every LIST take pages. */
  services: number;
  /** How long the API stays killed. */
  outageMs: number;
  /** How long every LIST fails with 500. */
  listFailureMs: number;
  /** Include the silent watch, which lasts the reflector's silent bound (SILENT_WATCH_MS). */
  silent: boolean;
  /** Queries per second of the steady load. */
  qps: number;
  /** Steady state between faults, once every watch is open again. Longer than the reflector's backoff
   * takes to forget failures (60 s), each fault starts from a clean slate, as an independent one
   * would; shorter, the faults run into each other's backoff. */
  pauseMs: number;
  /** How long a new Service or the store may take after a fault before it counts as lost. */
  settleMs: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** Also log the kubernetes plugin's lines after each fault. */
  verbose?: boolean;
}

export interface FaultRow {
  fault: string;
  queries: number;
  /** Queries for known names that timed out, failed or came back empty. */
  failed: number;
  failures: string[];
  /** How long the fault lasted: the outage, the silence until the watch was given up; 0 for a fault
   * that is one bad answer. */
  faultMs: number;
  /** From the end of the fault until the Service created during it answered, ms; undefined if it
   * never did within the wait. */
  recoveryMs?: number;
  /** The fault hit a request (false: a hook that never ran; the row tested nothing). */
  exercised: boolean;
  /** The store against the API's objects, once it settled (or at the end of the wait). */
  store: Comparison;
}

const ZONES = ["cluster.local.", "in-addr.arpa."];
/** The namespace of the Services the faults create. */
const CREATED_NS = "faults";
const KINDS: Kind[] = ["services", "namespaces", "endpointslices"];

/** One fault. `start` breaks the API; the fault's changes are made; `end` resolves when the fault is
 * over (the API back, the silent watch given up), which recovery counts from; `exercised` says
 * whether the fault hit a request (a hook that never ran tested nothing); `after` tidies up. */
interface Fault {
  name: string;
  start(api: TestApiServer): void | Promise<void>;
  end?(api: TestApiServer): Promise<void>;
  exercised?(): boolean;
  after?(api: TestApiServer): void;
}

/** A fault that hooks the next paged relist (forced with a 410): `onPage` runs before its second page. */
function duringRelist(name: string, onPage: (api: TestApiServer) => void): Fault {
  let fired = false;
  return {
    name,
    start: (api) => {
      fired = false;
      api.onList((q) => {
        if (!q.continue || fired) return;
        fired = true;
        onPage(api);
      });
      api.expireWatches();
    },
    exercised: () => fired,
    after: (api) => api.onList(undefined),
  };
}

/** The faults in the order they run; `known` are the names the load asks, which no fault touches. */
function faults(o: FaultsOptions, known: ReadonlySet<string>): Fault[] {
  const list: Fault[] = [
    {
      name: `API killed for ${o.outageMs / 1000} s and restarted`,
      start: (api) => api.kill(),
      end: async (api) => {
        await sleep(o.outageMs);
        await api.restart();
      },
    },
    { name: "410 Gone on every watch", start: (api) => api.expireWatches() },
    {
      name: `500 on every LIST for ${o.listFailureMs / 1000} s (after a 410)`,
      start: (api) => {
        api.failLists(500);
        api.expireWatches();
      },
      end: async (api) => {
        await sleep(o.listFailureMs);
        api.failLists(undefined);
      },
    },
    {
      name: "truncated JSON: the next 6 lists and watches, after a 410",
      start: (api) => {
        api.truncateNext(6);
        api.expireWatches();
      },
    },
    duringRelist("relist whose continue token expires between pages", (api) => api.compact()),
    // One from a page already delivered, one from a page still to come.
    duringRelist("objects deleted during a relist (paged)", (api) => {
      const vs = victims(api, known);
      for (const svc of [vs[0], vs.at(-1)!]) api.remove("services", svc);
    }),
  ];
  if (o.silent) {
    list.push({
      name: `silent watches (no event, no bookmark; the bound is ${SILENT_WATCH_MS / 1000} s)`,
      start: (api) => api.silenceWatches(),
      // Over when the reflectors gave up on the silent watches and watched again.
      end: (api) => untilRequest(api, (r) => r.watch),
    });
  }
  return list;
}

/** Resolves once the API receives a request that `match` accepts, or after the silent bound and a
 * minute. */
async function untilRequest(api: TestApiServer, match: (r: RecordedRequest) => boolean): Promise<void> {
  const from = api.requests.length;
  for (let i = 0; i < (SILENT_WATCH_MS + 60_000) / 50; i++) {
    if (api.requests.slice(from).some(match)) return;
    await sleep(50);
  }
}

const byKey = (a: KService, b: KService) =>
  `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}` ? -1 : 1;
const sortedServices = (api: TestApiServer) => (api.objects("services") as KService[]).sort(byKey);
/** Services a fault may change or delete: the generated ones the load does not ask for. */
const victims = (api: TestApiServer, known: ReadonlySet<string>) =>
  sortedServices(api).filter((s) => s.metadata.namespace !== CREATED_NS && !known.has(nameOf(s)));
const nameOf = (s: KService) => `${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local.`;

/** The first A record's address in the answer to `name`, or undefined. */
async function addressOf(port: number, name: string): Promise<string | undefined> {
  const reply = await exchangeUdp(port, encode(newQuery(name, Type.A)), 200);
  if (reply === undefined) return undefined;
  const rr = decode(reply).answer[0];
  return rr && "address" in rr.data ? rr.data.address : undefined;
}

/** Asks every 10 ms until `name` answers with `ip`; the ms it took, or undefined after `limitMs`. */
async function untilAnswers(
  port: number,
  name: string,
  ip: string,
  limitMs: number,
): Promise<number | undefined> {
  const t0 = performance.now();
  while (performance.now() - t0 < limitMs) {
    if ((await addressOf(port, name)) === ip) return performance.now() - t0;
    await sleep(10);
  }
  return undefined;
}

/** Compares the process's store (its snapshot file, written every second) with the API until they
 * are equal or `limitMs` passed; the last comparison. */
async function settledComparison(api: TestApiServer, file: string, limitMs: number): Promise<Comparison> {
  const t0 = performance.now();
  let last: Comparison = { equal: false, records: 0, differences: ["no snapshot written"] };
  while (performance.now() - t0 < limitMs) {
    const got = snapshotDump(file);
    if (got) last = compareDumps(got, apiDump(api, { zones: ZONES, kinds: KINDS }));
    if (last.equal) return last;
    await sleep(250);
  }
  return last;
}

export async function runApiFaults(o: FaultsOptions): Promise<FaultRow[]> {
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-faults-"));
  const cluster = generateCluster({ services: o.services, seed: 18 });
  const api = await startApiServer({ bookmarkIntervalMs: 1000 });
  serveObjects(api, cluster.objects);
  const snapshot = join(dir, "snapshot.json");
  let srv: RunningServer | undefined;
  try {
    srv = await startServer(`cluster.local in-addr.arpa {
    kubernetes cluster.local in-addr.arpa {
        kubeconfig ${writeKubeconfig(dir, api.url)}
        snapshot ${snapshot} 1s
    }
}
`);
    const port = srv.port;
    // The load asks 20 ClusterIP services and their SRV names, none of which any fault touches.
    const clusterIP = sortedServices(api).filter(
      (s) => s.spec.type === "ClusterIP" && s.spec.ports?.[0]?.name,
    );
    const questions: Question[] = [];
    const known = new Set<string>();
    for (const s of clusterIP.slice(
      Math.floor(clusterIP.length / 2),
      Math.floor(clusterIP.length / 2) + 20,
    )) {
      known.add(nameOf(s));
      questions.push({ name: nameOf(s), qtype: Type.A });
      questions.push({ name: `_${s.spec.ports![0].name}._tcp.${nameOf(s)}`, qtype: Type.SRV });
    }
    const first = clusterIP[Math.floor(clusterIP.length / 2)];
    if ((await untilAnswers(port, nameOf(first), first.spec.clusterIP!, o.settleMs)) === undefined) {
      throw new Error("clusterdns never answered from the API");
    }
    log(`synced: ${o.services} services, load of ${questions.length} names at ${o.qps} qps`);

    const rows: FaultRow[] = [];
    let n = 0;
    for (const fault of faults(o, known)) {
      n++;
      for (let i = 0; i < 1200 && api.openWatches() < KINDS.length; i++) await sleep(50);
      await sleep(o.pauseMs);
      log(`fault ${n}: ${fault.name}`);
      const load = startMixedLoad(port, questions, {
        intervalMs: 1000 / o.qps,
        maxQueries: o.qps * (o.settleMs / 1000) * 10,
        needAnswer: true,
      });
      await sleep(200);
      // During the fault: one Service created, one changed, one deleted (none of them known names).
      const vs = victims(api, known);
      const changed = vs.find((v) => v.spec.type === "ClusterIP")!;
      const deleted = vs.at(-1)!;
      const ip = `10.${200 + n}.0.1`;
      const started = performance.now();
      await fault.start(api);
      const created = api.create("services", service(CREATED_NS, `created-${n}`, { clusterIP: ip }));
      changed.spec.clusterIP = changed.spec.clusterIPs![0] = `10.${200 + n}.0.2`;
      api.update("services", changed);
      api.remove("services", deleted);
      await fault.end?.(api);
      const faultMs = performance.now() - started;
      const recoveryMs = await untilAnswers(port, nameOf(created), ip, o.settleMs);
      const store = await settledComparison(api, snapshot, o.settleMs);
      await sleep(200);
      const r = await load.stop();
      if (o.verbose) {
        for (const l of srv.logs.splice(0)) if (l.plugin === "kubernetes") log(`    ${JSON.stringify(l)}`);
      }
      fault.after?.(api);
      const row: FaultRow = {
        fault: fault.name,
        queries: r.sent,
        failed: r.failures.length,
        failures: r.failures.slice(0, 5),
        faultMs,
        recoveryMs,
        exercised: fault.exercised?.() ?? true,
        store,
      };
      rows.push(row);
      log(`  ${rowText(row)}`);
    }
    if (srv.proc.exitCode !== null) throw new Error(`clusterdns exited with ${srv.proc.exitCode}`);
    return rows;
  } finally {
    await srv?.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const seconds = (ms: number | undefined) => (ms === undefined ? "never" : (ms / 1000).toFixed(2));
const storeText = (c: Comparison) =>
  c.equal ? `yes (${c.records} records)` : `no: ${c.differences.join("; ")}`;

function rowText(r: FaultRow): string {
  return (
    `${r.failed} of ${r.queries} failed; lasted ${seconds(r.faultMs)} s; new Service ` +
    `${seconds(r.recoveryMs)} s after; store equal: ${storeText(r.store)}` +
    (r.exercised ? "" : "; NOT EXERCISED")
  );
}

/** The rows as a Markdown table. */
export function faultsTable(rows: FaultRow[]): string {
  return [
    "| fault | queries for known names | failed | fault lasted s | new Service answers after s | store equal to the API |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.fault}${r.exercised ? "" : " (not exercised)"} | ${r.queries} | ${r.failed} | ${seconds(r.faultMs)} | ${seconds(r.recoveryMs)} | ${storeText(r.store)} |`,
    ),
  ].join("\n");
}

/** The part `npm run soak` runs: every fault on 2,000 services at 500 queries a second with 65 s of
 * steady state between faults (about 12 minutes), or, reduced, the bounds of k8s-faults.test.ts
 * without the silent watch (which that test runs in-process with a short bound). */
export const k8sFaults: SoakPart = {
  name: "k8s-faults",
  what: "the Kubernetes API killed, 410s, 500s, truncated JSON, expiring continue tokens, silent watches",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("k8s-faults");
    const rows = await runApiFaults({
      services: o.reduced ? 600 : 2000,
      outageMs: o.reduced ? 1000 : 30_000,
      listFailureMs: o.reduced ? 1000 : 60_000,
      silent: !o.reduced,
      qps: o.reduced ? 100 : 500,
      pauseMs: o.reduced ? 0 : 65_000,
      settleMs: o.reduced ? 20_000 : SILENT_WATCH_MS + 60_000,
      log: o.log,
    });
    o.log(`\n${faultsTable(rows)}`);
    for (const r of rows) {
      report.check(`${r.fault}: fault hit a request`, r.exercised ? "yes" : "no", r.exercised, "yes");
      report.check(
        `${r.fault}: queries for known names failed`,
        `${r.failed} of ${r.queries}`,
        r.failed === 0,
        "0",
      );
      const recovered = r.recoveryMs !== undefined && (o.reduced || r.recoveryMs <= 5000);
      report.check(
        `${r.fault}: new Service answers after`,
        `${seconds(r.recoveryMs)} s`,
        recovered,
        "<= 5 s",
      );
      report.check(`${r.fault}: store equal to the API`, storeText(r.store), r.store.equal, "yes");
    }
    return report;
  },
};

if (import.meta.main) await runAlone(k8sFaults);
