// Soak part "k8s-reload": a Corefile reloaded (SIGUSR1) under a steady UDP load while its kubernetes
// store holds a big cluster from the test API server (100,000 Services at full scale), twice:
// - with the kubernetes block's source unchanged (only its ttl edited): the new configuration takes
//   the running store over, so no LIST and no new watch is made, and the new ttl is answered at once;
// - with the source changed (a label selector added that every object matches): the new store lists
//   the cluster while the old configuration answers; it takes over only once synced, however long
//   that takes (the reduced run holds the LIST 8 s, past the 5 s that used to end the wait).
// Issue 33: the new configuration took over 5 s after the reload began, unsynced, and a second of
// queries got SERVFAIL (755 and 1,918 of 2,000). Figures: LISTs and watches made by the unchanged
// reload (target 0), the seconds each reload took, and over the whole load, queries lost and SERVFAIL
// (target 0). Reduced: 10,000 Services at 1,000 QPS.
//   npm run soak -- k8s-reload [--reduced]     (or node test/soak/k8s-reload.ts [--reduced])

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Report, runAlone, type PartOptions, type SoakPart } from "./part.ts";
import { probeNames, udpProbe } from "./udp-probe.ts";
import { startApiServer, type TestApiServer } from "../k8s/api-server.ts";
import { writeKubeconfig } from "../k8s/kubeconfig.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { generateCluster } from "../../bench/cluster-gen.ts";
import { serveObjects } from "../../bench/cluster-api.ts";
import { IMAGE_ENV, NODE_FLAGS } from "../../bench/processes.ts";
import { udpExchange } from "../../src/client/udp-exchange.ts";
import { newQuery } from "../../src/dns/message.ts";
import { Type } from "../../src/dns/constants.ts";

/** kubeadm's Corefile without forward and loop (the load asks cluster names only); `extra` goes into
 * the kubernetes block. A long startup_timeout: the load starts on a synced server, on a busy machine
 * too (100k Services can take over 5 s to list there). */
const corefile = (kubeconfig: string, ttl: number, extra = "") => `. {
    errors
    health 127.0.0.1:0
    ready 127.0.0.1:0
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl ${ttl}
        startup_timeout 3m
        ${extra}
    }
    prometheus 127.0.0.1:0
    cache 30
    loadbalance
}
`;

/** LIST requests (every page) and watches the API server has had, for every kind. */
function requests(api: TestApiServer): { lists: number; watches: number } {
  const kinds = ["services", "endpointslices", "namespaces"] as const;
  const count = (watch: boolean) => kinds.reduce((n, k) => n + api.requestsFor(k, watch).length, 0);
  return { lists: count(false), watches: count(true) };
}

/** Sends SIGUSR1 and waits (bounded) for the reload's outcome: its seconds, or NaN when it was
 * rejected or did not end in time. */
async function reload(srv: RunningServer, boundS: number): Promise<number> {
  const seen = srv.logs.length;
  const t0 = performance.now();
  srv.proc.kill("SIGUSR1");
  for (;;) {
    const line = srv.logs.slice(seen).find((l) => l.msg === "reloaded" || /rejected/.test(String(l.msg)));
    if (line !== undefined) return line.msg === "reloaded" ? (performance.now() - t0) / 1000 : NaN;
    if (performance.now() - t0 > boundS * 1000) return NaN;
    await sleep(20);
  }
}

/** Whether the reload took effect, and its seconds. */
function reloaded(report: Report, what: string, seconds: number): void {
  const ok = !Number.isNaN(seconds);
  report.check(`${what}: reloaded`, ok ? "yes" : "no", ok, "yes");
  report.note(`${what}: seconds from SIGUSR1 to reloaded`, seconds.toFixed(2));
}

export const k8sReload: SoakPart = {
  name: "k8s-reload",
  what: "reloads under load at 100k Services: an unchanged kubernetes block, then a changed one",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("k8s-reload");
    const services = o.reduced ? 10_000 : 100_000;
    const qps = o.reduced ? 1000 : 2000;
    const cluster = generateCluster({ services });
    const names = probeNames(cluster.queries);
    const api = await startApiServer({ bookmarkIntervalMs: 0 });
    serveObjects(api, cluster.objects);
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-k8s-reload-"));
    const kubeconfig = writeKubeconfig(dir, api.url);
    let srv: RunningServer | undefined;
    try {
      srv = await startServer(corefile(kubeconfig, 30), {
        env: { ...IMAGE_ENV, NODE_OPTIONS: NODE_FLAGS.join(" ") },
        timeoutMs: 180_000,
      });
      const file = join(srv.dir, "Corefile");
      o.log(`${services} services; started; ${qps} QPS`);
      const started = performance.now();
      const at = () => ((performance.now() - started) / 1000).toFixed(1);
      const probe = udpProbe(srv.port, {
        qps,
        seconds: 300,
        sockets: 16,
        timeoutMs: 2000,
        names,
        onSecond: (s) => {
          if (s.lost > 0) o.log(`${at()} s: ${s.lost} lost`);
        },
      });
      await sleep(3000);

      // 1. The source unchanged: only the ttl.
      const before = requests(api);
      writeFileSync(file, corefile(kubeconfig, 20));
      o.log(`${at()} s: reload 1 (ttl 30 -> 20, same source)`);
      const sameS = await reload(srv, 120);
      const made = requests(api);
      reloaded(report, "unchanged source", sameS);
      report.check(
        "unchanged source: LIST requests",
        made.lists - before.lists,
        made.lists === before.lists,
        "0",
      );
      report.check(
        "unchanged source: watches started",
        made.watches - before.watches,
        made.watches === before.watches,
        "0",
      );
      const q = newQuery(cluster.names.clusterIP[0] + ".", Type.A, 1, 4321);
      const ttl = (await udpExchange("127.0.0.1", srv.port, q, 2000))?.answer[0]?.ttl;
      report.check("unchanged source: the new ttl is answered", String(ttl), ttl === 20, "20");
      await sleep(3000);

      // 2. The source changed: every object still matches, but the new store lists them all.
      if (o.reduced) {
        let first = true;
        api.onList(() => {
          if (!first) return;
          first = false;
          return sleep(8000);
        });
      }
      writeFileSync(file, corefile(kubeconfig, 20, "labels !clusterdns.test/none"));
      o.log(`${at()} s: reload 2 (labels added: a new source)`);
      const otherS = await reload(srv, 240);
      api.onList(undefined);
      reloaded(report, "changed source", otherS);
      await sleep(3000);

      const r = await probe.stop();
      report.check("queries lost (no reply within 2 s)", r.lost, r.sent > 0 && r.lost === 0, "0");
      report.check("SERVFAIL and other failures", r.failed, r.failed === 0, "0");
      report.note("queries sent", r.sent);
      report.note(
        "latency p50 / p99 / worst",
        `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} / ${r.worstMs.toFixed(1)} ms`,
      );
      report.alive(srv.proc);
    } finally {
      await srv?.stop();
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return report;
  },
};

if (import.meta.main) await runAlone(k8sReload);
