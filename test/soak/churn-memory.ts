// Soak part "churn-memory": memory after API churn. One clusterdns, with the image's node flags and
// environment, watches the test API server (10,000 Services at full scale) on kubeadm's Corefile
// (forward aside: the clients ask cluster names). After a warm-up under a steady query load, Services
// and their EndpointSlices are created and deleted at 50 operations a second for 30 minutes while
// clients ask for the names that come and go (each new Service's A, SRV and AAAA, each deleted one's A
// and SRV, the live ones again and again), then the churn stops and the steady load goes on. RSS is
// sampled every minute. Targets: RSS at the end within 10% of the baseline, and no upward trend over
// the last 10 minutes of the churn (issue 25: 5 minutes left RSS 31 MB over its baseline, 12 minutes
// 65 MB, rising about 6 MB a minute).
//   npm run soak -- churn-memory [--reduced]     (or node test/soak/churn-memory.ts [--reduced])

import dgram from "node:dgram";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Report, rssMb, runAlone, type PartOptions, type SoakPart } from "./part.ts";
import { startApiServer } from "../k8s/api-server.ts";
import { writeKubeconfig } from "../k8s/kubeconfig.ts";
import { endpointSlice, service } from "../k8s/objects.ts";
import { startServer } from "../helpers/server.ts";
import { freePort } from "../helpers/free-port.ts";
import { sample } from "../helpers/metrics.ts";
import { generateCluster } from "../../bench/cluster-gen.ts";
import { serveObjects } from "../../bench/cluster-api.ts";
import { IMAGE_ENV, NODE_FLAGS } from "../../bench/processes.ts";
import { encode } from "../../src/dns/encode.ts";
import { newQuery } from "../../src/dns/message.ts";
import type { KEndpointSlice, KService } from "../../src/plugins/kubernetes/model/source.ts";
import { Type } from "../../src/dns/constants.ts";

const OPS_PER_SECOND = 50;
/** Churn services alive at once: each delete takes the oldest. */
const ALIVE = 100;
const RISE_PERCENT = 10;
/** The most the least-squares slope of the last samples may rise, MB a minute. */
const SLOPE_MB_MIN = 0.5;

const corefile = (kubeconfig: string, metricsPort: number) => `. {
    errors
    health 127.0.0.1:0 {
        lameduck 5s
    }
    ready 127.0.0.1:0
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 127.0.0.1:${metricsPort}
    cache 30
    reload
    loadbalance
}
`;

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export const churnMemory: SoakPart = {
  name: "churn-memory",
  what: "RSS through 30 minutes of Service churn at 50 operations/s and after it",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("churn-memory");
    const services = o.reduced ? 1000 : 10_000;
    // Times in ms: warm-up, churn, the settling after it, and how often RSS is sampled.
    const [warmMs, churnMs, settleMs, everyMs] = o.reduced
      ? [8_000, 20_000, 6_000, 2_000]
      : [120_000, 30 * 60_000, 120_000, 60_000];
    const trendSamples = o.reduced ? 5 : 10;
    const cluster = generateCluster({ services });
    const steadyNames = cluster.queries
      .filter((q) => q.endsWith(" A"))
      .filter((_, i) => i % Math.max(1, Math.floor(services / 200)) === 0)
      .map((q) => q.split(" ")[0]);
    const api = await startApiServer({ bookmarkIntervalMs: 0, maxLogEvents: 1000 });
    serveObjects(api, cluster.objects);
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-churn-"));
    const metricsPort = await freePort();
    const srv = await startServer(corefile(writeKubeconfig(dir, api.url), metricsPort), {
      env: { ...IMAGE_ENV, NODE_OPTIONS: NODE_FLAGS.join(" ") },
      timeoutMs: 60_000,
    });
    const pid = srv.proc.pid!;
    const sock = dgram.createSocket("udp4");
    let asked = 0;
    let answered = 0;
    sock.on("message", () => answered++);
    const ask = (name: string, type: number) => {
      asked++;
      sock.send(encode(newQuery(name, type, 1, asked & 0xffff)), srv.port, "127.0.0.1");
    };
    // The steady load: the cluster's own names, 100 a second, from start to end.
    let steady = 0;
    const load = setInterval(() => {
      for (let k = 0; k < 10; k++) ask(steadyNames[steady++ % steadyNames.length], Type.A);
    }, 100);
    const metric = async (name: string) => {
      try {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return sample(text, name) ?? NaN;
      } catch {
        return NaN;
      }
    };
    const heapMb = async () => (await metric("nodejs_heap_size_used_bytes")) / 2 ** 20;
    const entries = () => metric("clusterdns_answer_cache_entries");
    try {
      await sleep(warmMs);
      const baseline = rssMb(pid);
      const baseHeap = await heapMb();
      const baseEntries = await entries();
      o.log(`${services} services; baseline RSS ${baseline.toFixed(1)} MB; churn for ${churnMs / 1000} s`);
      const fqdn = (name: string) => `${name}.team-0.svc.cluster.local.`;
      const live: { svc: KService; slice: KEndpointSlice }[] = [];
      const samples: { min: number; rss: number }[] = [];
      const started = performance.now();
      let nextSample = started + everyMs;
      let ops = 0;
      while (performance.now() - started < churnMs) {
        const due = Math.floor(((performance.now() - started) / 1000) * OPS_PER_SECOND);
        for (; ops < due; ops++) {
          if (ops % 2 === 0 || live.length < ALIVE) {
            const name = `churn-${ops}`;
            const ip = (base: number) => `10.${base}.${(ops >> 8) & 255}.${ops & 255}`;
            const http = [{ name: "http", port: 80 }];
            const svc = api.create("services", service("team-0", name, { clusterIP: ip(200), ports: http }));
            const slice = api.create(
              "endpointslices",
              endpointSlice("team-0", name, `${name}-a`, [ip(201)], { ports: http }),
            );
            live.push({ svc, slice });
            ask(fqdn(name), Type.A);
            ask(`_http._tcp.${fqdn(name)}`, Type.SRV);
            ask(fqdn(name), Type.AAAA);
          } else {
            const gone = live.shift()!;
            api.remove("endpointslices", gone.slice);
            api.remove("services", gone.svc);
            ask(fqdn(gone.svc.metadata.name), Type.A);
            ask(`_http._tcp.${fqdn(gone.svc.metadata.name)}`, Type.SRV);
          }
          ask(fqdn(live[ops % live.length].svc.metadata.name), Type.A);
        }
        if (performance.now() >= nextSample) {
          nextSample += everyMs;
          const s = { min: (performance.now() - started) / 60_000, rss: rssMb(pid) };
          samples.push(s);
          o.log(`${s.min.toFixed(1)} min: RSS ${s.rss.toFixed(1)} MB, ${ops} operations`);
        }
        await sleep(20);
      }
      const atChurnEnd = rssMb(pid);
      await sleep(settleMs);
      const end = rssMb(pid);
      const endHeap = await heapMb();
      const endEntries = await entries();

      report.note(
        "services; churn operations (creates and deletes of a Service and its slice)",
        `${services}; ${ops}`,
      );
      report.note("RSS each sample during the churn, MB", samples.map((s) => s.rss.toFixed(0)).join(" "));
      report.note(
        "RSS baseline -> at the churn's end -> after it",
        `${baseline.toFixed(1)} -> ${atChurnEnd.toFixed(1)} -> ${end.toFixed(1)} MB`,
      );
      const rise = (100 * (end - baseline)) / baseline;
      report.check(
        "RSS at the end over the baseline",
        `${rise.toFixed(1)}%`,
        rise <= RISE_PERCENT,
        `<= ${RISE_PERCENT}%`,
      );
      const last = samples.slice(-trendSamples);
      const trend =
        last.length >= 2
          ? slope(
              last.map((s) => s.min),
              last.map((s) => s.rss),
            )
          : NaN;
      const trendName = `RSS trend over the last ${last.length} samples of the churn`;
      // At the reduced size the samples are seconds apart: RSS moves with each collection, no trend.
      if (o.reduced) report.note(trendName, `${trend.toFixed(2)} MB/min`);
      else
        report.check(
          trendName,
          `${trend.toFixed(2)} MB/min`,
          trend <= SLOPE_MB_MIN,
          `<= ${SLOPE_MB_MIN} MB/min`,
        );
      report.note("V8 heap in use, baseline -> end", `${baseHeap.toFixed(1)} -> ${endHeap.toFixed(1)} MB`);
      report.note("replies held by the answer stores, baseline -> end", `${baseEntries} -> ${endEntries}`);
      report.note("queries asked / replies", `${asked} / ${answered}`);
      report.alive(srv.proc);
    } finally {
      clearInterval(load);
      sock.close();
      await srv.stop();
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return report;
  },
};

if (import.meta.main) await runAlone(churnMemory);
